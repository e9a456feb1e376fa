package serve

import (
	"fmt"
	"net/http"
	"runtime"
	"time"

	"github.com/clrspy/clrspy/internal/monitor"
	"github.com/clrspy/clrspy/internal/procfs"
	"github.com/clrspy/clrspy/memory"
	"github.com/clrspy/clrspy/report"
	"github.com/clrspy/clrspy/runinfo"
	"github.com/clrspy/clrspy/source"
	"github.com/clrspy/clrspy/triage"
)

// triageHandler serves /triage?pid=N&seconds=S: the target's findings
// over the next S seconds (10 by default), judged from two snapshots of
// its always-on monitor S seconds apart: no session of its own. The CPU
// demand and thread count come from /proc when the process is visible.
// JSON (the document of `clrspy triage --json`); format=text for text.
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
		if t == nil || !d.isUp(t) {
			http.Error(w, fmt.Sprintf("pid %s: no process monitored now (see /targets)", pid), http.StatusNotFound)
			return
		}
		if !d.peerAllowed(w, r, t) {
			return
		}
		// The answer comes after the window: the server's write deadline
		// (a minute) would cut a longer one.
		extendDeadlines(w, span)
		d.mu.Lock()
		mon := t.mon
		d.mu.Unlock()
		if mon == nil {
			http.Error(w, fmt.Sprintf("pid %s: no session yet", pid), http.StatusServiceUnavailable)
			return
		}
		procPid := t.hostPid
		if t.kind != source.Listen && procPid == 0 {
			procPid = t.pid
		}
		prev := mon.Snapshot()
		s0, err0 := procfs.SchedNanos(procPid)
		var m0 *memory.Sample
		if t.hostPid > 0 {
			if s, _, err := readMemory(t.hostPid); err == nil {
				m0 = &s
			}
		}
		t0 := time.Now()
		select {
		case <-r.Context().Done():
			return
		case <-time.After(span):
		}
		cur := mon.Snapshot()
		env := monitor.TriageEnv{Target: "--pid " + pid, Cores: runtime.NumCPU(), CPUDemandPct: -1}
		if s1, err1 := procfs.SchedNanos(procPid); procPid > 0 && err0 == nil && err1 == nil {
			env.CPUDemandPct = procfs.DemandPct(s0, s1, time.Since(t0), env.Cores)
		}
		if procPid > 0 {
			if ths, err := procfs.Threads(procPid); err == nil {
				env.Threads = len(ths)
			}
		}
		f := monitor.TriageFacts(prev, cur, env)
		if m0 != nil {
			f.Memory.Split = windowSplit(t, *m0)
		}
		lost := cur.Session.EventsLost - prev.Session.EventsLost
		in := report.Input{Source: cur.Session.Source, Live: true, Events: cur.Session.Events - prev.Session.Events,
			EventsLost: lost, Complete: lost == 0}
		if lost > 0 {
			in.Partial = []string{fmt.Sprintf("%d events lost: the figures miss what they carried", lost)}
		}
		doc := report.NewTriageDocument(in, f, runinfo.Info{Runtime: cur.Process.RuntimeVersion, GC: cur.Process.GC.Kind})
		if format == "text" {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			report.WriteTriageText(w, doc)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		report.WriteTriageJSON(w, doc)
	}
}

// windowSplit judges the target's memory over the window that began with
// first: the periodic samples taken since, and one read now.
func windowSplit(t *target, first memory.Sample) *triage.SplitFacts {
	ss := []memory.Sample{first}
	ring, _ := t.mem.get()
	for _, s := range ring {
		if s.AtNs > first.AtNs {
			ss = append(ss, s)
		}
	}
	var limit, usage uint64
	if s, cg, err := readMemory(t.hostPid); err == nil {
		ss = append(ss, s)
		if cg != nil {
			limit, usage = cg.Limit, cg.Usage
		}
	}
	return triage.SplitOf(ss, limit, usage)
}
