package serve

import (
	"cmp"
	"fmt"
	"net/http"
	"time"

	"github.com/clrspy/clrspy/capture"
	"github.com/clrspy/clrspy/internal/cdac"
	"github.com/clrspy/clrspy/internal/fleet"
	"github.com/clrspy/clrspy/memory"
	"github.com/clrspy/clrspy/report"
)

// triageHandler serves /triage?pid=N&seconds=S: the target's findings
// over the next S seconds (10 by default). The window's events of the
// target's always-on session go through triage's own analyses (the tap:
// the code `clrspy triage --pid` runs, no session of its own), and the
// CPU demand, busiest thread and memory split come from /proc through
// the window triage runs (capture.Window), so both judge a window alike.
// JSON (the document of
// `clrspy triage --json`); format=text for text.
func (d *Daemon) triageHandler(maxDur time.Duration) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		p, err := queryParams(r)
		var pid, format string
		span := 10 * time.Second
		if err == nil {
			pid, err = p.pid()
		}
		if err == nil {
			span, err = p.seconds(span, maxDur)
		}
		if err == nil {
			format, err = p.word("format", "json", "json", "text")
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		t := d.lookup(pid)
		if t == nil || !t.Up() {
			http.Error(w, fmt.Sprintf("pid %s: no process monitored now (see /targets)", pid), http.StatusNotFound)
			return
		}
		if !d.peerAllowed(w, r, t) {
			return
		}
		// The answer comes after the window: the server's write deadline
		// (a minute) would cut a longer one.
		extendDeadlines(w, span)
		sess := t.Session()
		if sess == nil {
			http.Error(w, fmt.Sprintf("pid %s: no session yet", pid), http.StatusServiceUnavailable)
			return
		}
		mon := sess.Monitor()
		set, a := capture.NewTriage(sess.CounterSession())
		a.SetTarget("--pid " + pid)
		set.Start(sess.Header())
		// The window's memory split: a reading now, the periodic ones
		// the target's memory watch takes meanwhile, and one at the end.
		win := capture.StartWindow(capture.WindowOptions{Pid: t.ProcPid(), SplitPid: t.HostPid(), Epoch: fleet.MemEpoch,
			Ring: func() []memory.Sample { ring, _ := t.Memory(); return ring }})
		if procPid := t.ProcPid(); procPid > 0 {
			nm := cdac.NewNamer(procPid) // the locks' object types from its memory (.NET 9+)
			defer nm.Close()
			a.SetObjectTypes(nm.Names)
		}
		prev := mon.Snapshot()
		sess.Attach(set)
		select {
		case <-r.Context().Done():
		case <-time.After(span):
		}
		sess.Detach(set)
		split := win.End(a, nil)
		if r.Context().Err() != nil {
			return
		}
		cur := mon.Snapshot()
		// A heap snapshot's GC in the window is the tool's: its session's
		// gcpause marked it (the window's stream has no heap dump).
		for _, n := range t.HeapDumps() {
			a.MarkHeapDump(n)
		}
		lost := cur.Session.EventsLost - prev.Session.EventsLost
		in := report.Input{Source: cur.Session.Source, Live: true, Events: cur.Session.Events - prev.Session.Events,
			EventsLost: lost, Complete: lost == 0}
		if lost > 0 {
			in.Partial = []string{fmt.Sprintf("%d events lost: the figures miss what they carried", lost)}
		}
		// The window has no rundown: the session's own figures name the
		// runtime.
		ri := a.Runtime()
		ri.Runtime = cmp.Or(ri.Runtime, cur.Process.RuntimeVersion)
		ri.GC = cmp.Or(ri.GC, cur.Process.GC.Kind)
		f := a.Facts()
		f.Memory.Split = split
		doc := report.NewTriageDocument(in, f, ri)
		if format == "text" {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			report.WriteTriageText(w, doc)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		report.WriteTriageJSON(w, doc)
	}
}
