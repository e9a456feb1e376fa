package serve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/clrspy/clrspy/capture"
	"github.com/clrspy/clrspy/heapgraph"
	"github.com/clrspy/clrspy/report"
	"github.com/clrspy/clrspy/source"
)

// snapshotTimeout bounds a snapshot session: the heap dump's GC must have
// ended by then (a variable for the tests).
var snapshotTimeout = capture.SnapshotTimeout

// heapHandler serves /debug/pprof/heap?pid=N: a heap snapshot of one
// target taken now (a blocking gen2 GC in the target, walk included),
// as the pprof profile whose stacks are retention paths.
func (d *Daemon) heapHandler(every time.Duration) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { d.serveHeap(w, r, every) }
}

func (d *Daemon) serveHeap(w http.ResponseWriter, r *http.Request, every time.Duration) {
	p, err := queryParams(r)
	var pid string
	if err == nil {
		pid, err = p.pid()
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	// A large heap's walk outlasts the server's write deadline.
	t, release := d.claim(w, r, pid, "a heap snapshot", snapshotTimeout, every, func(t *target) *slot { return &t.snapshotting })
	if t == nil {
		return
	}
	defer release()
	in, g, err := d.snapshot(r.Context(), t)
	if err != nil {
		http.Error(w, fmt.Sprintf("pid %s: %v", pid, err), http.StatusBadGateway)
		return
	}
	var buf bytes.Buffer
	if err := report.WriteSnapshotPprof(&buf, in, g); err != nil {
		http.Error(w, fmt.Sprintf("pid %s: %v", pid, err), http.StatusInternalServerError)
		return
	}
	if !g.Complete() {
		d.log.Warn("heap snapshot incomplete (the profile's comments say what is missing)", "pid", t.PidLabel(), "process", t.Name())
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="heap-%s.pb.gz"`, pid))
	w.Write(buf.Bytes())
}

// snapshot takes a heap snapshot of t (its snapshotting slot held): a
// session of its own (through the
// target's reverse connection in listen mode) whose keywords make the
// runtime induce a blocking gen2 GC and describe its heap; the session is
// stopped as soon as that GC ends, or when ctx does, or after
// snapshotTimeout.
func (d *Daemon) snapshot(ctx context.Context, t *target) (report.Input, *heapgraph.Graph, error) {
	st, err := t.Open(source.Spec{Providers: capture.SnapshotProviders(), BufferMB: capture.SnapshotBufferMB, Duration: snapshotTimeout})
	if err != nil {
		return report.Input{}, nil, err
	}
	defer st.Close()
	// Cancelling ctx stops the session; the stream then ends.
	defer context.AfterFunc(ctx, st.Stop)()
	d.log.Info("heap snapshot: inducing a blocking gen2 GC", "pid", t.PidLabel(), "process", t.Name())
	job := capture.NewSnapshot(st.Stop)
	// The runtime names each type once while the monitoring session
	// lives (heapgraph.Builder.KnownTypes): a later snapshot's names come
	// from the earlier ones. Snapshots of a target take turns (its slot).
	// The graph's arrays are Go arrays: a daemon takes one snapshot after
	// another.
	b := job.Start(st.Header(), capture.Memory{}, t.typeNames)
	end, err := st.Run(job.Set())
	t.typeNames = b.NamedTypes()
	// The GC the runtime described the heap in is the snapshot's own,
	// which the target's judgements keep out of its induced GCs
	// (fleet.Source.HeapDumped).
	dumpGC := job.DumpGC()
	if dumpGC != 0 {
		t.HeapDumped(dumpGC)
	}
	in := report.NewInput(st.Name, st.Live(), end, job.Set().Stats())
	if err != nil {
		return in, nil, err
	}
	if !b.Dumped() {
		if ctx.Err() != nil {
			return in, nil, errors.New("the request ended before the heap dump")
		}
		return in, nil, fmt.Errorf("no heap dump arrived within %v", snapshotTimeout)
	}
	// Static roots by class and field: the class from the modules'
	// metadata, read through the target's root (0: not visible here).
	g, err := job.Graph(st, t.HostPid(), nil)
	if err != nil {
		return in, nil, err
	}
	d.log.Info("heap snapshot taken", "pid", t.PidLabel(), "process", t.Name(), "gc", dumpGC, "objects", g.N, "bytes", g.Bytes,
		"pause_ms", float64(g.Pause.Microseconds())/1000, "complete", g.Complete())
	return in, g, nil
}
