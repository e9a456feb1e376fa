package serve

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/clrspy/clrspy/internal/stacksnap"
	"github.com/clrspy/clrspy/report"
	"github.com/clrspy/clrspy/source"
)

// stacksHandler serves /debug/stacks?pid=N: every thread of the target
// now, its stack and what it waits on, threads grouped, suspected
// deadlocks (the document of `clrspy stacks --json`, taken by the same
// job, package stacksnap: a short session of its own whose sampler
// suspends the runtime about once a millisecond for sample_ms). JSON;
// format=text for text. One at a time per target, and at most one
// within every of the last one's end.
func (d *Daemon) stacksHandler(every time.Duration) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		p, err := queryParams(r)
		var pid, format string
		if err == nil {
			pid, err = p.pid()
		}
		if err == nil {
			format, err = p.word("format", "json", "json", "text")
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		t, release := d.claim(w, r, pid, "a stacks snapshot", stacksnap.MaxSession, every, func(t *target) *slot { return &t.stacking })
		if t == nil {
			return
		}
		defer release()
		doc, err := d.stacks(r.Context(), t)
		if err != nil {
			http.Error(w, fmt.Sprintf("pid %s: %v", pid, err), http.StatusBadGateway)
			return
		}
		for _, dl := range doc.Deadlocks {
			what := "deadlock"
			if dl.Suspected {
				what = "suspected deadlock"
			}
			d.log.Warn(what+" (/debug/stacks)", "pid", t.PidLabel(), "process", t.Name(), "threads", fmt.Sprint(dl.Threads))
		}
		if format == "text" {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			report.WriteStacksText(w, doc)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		report.WriteStacksJSON(w, doc)
	}
}

// stacks takes one snapshot of t's threads (its stacking slot held).
func (d *Daemon) stacks(ctx context.Context, t *target) (*report.StacksDocument, error) {
	st, err := t.Open(source.Spec{Providers: stacksnap.Providers(), BufferMB: d.cfg.BufferSize(), Duration: stacksnap.MaxSession})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	defer context.AfterFunc(ctx, st.Stop)()
	doc, err := stacksnap.Snapshot(st, t.Pid(), t.ProcPid(), stacksnap.DefaultSampleFor)
	if err != nil {
		return nil, err
	}
	if doc.Sampled == 0 {
		return nil, fmt.Errorf("the sample profiler sampled no thread within %v", stacksnap.MaxSession)
	}
	return doc, nil
}
