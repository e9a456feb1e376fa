package serve

import (
	"cmp"
	"fmt"
	"net/http"
	"runtime"
	"slices"
	"time"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/internal/cdac"
	"github.com/clrspy/clrspy/internal/procfs"
	"github.com/clrspy/clrspy/memory"
	"github.com/clrspy/clrspy/report"
	"github.com/clrspy/clrspy/source"
	"github.com/clrspy/clrspy/triage"
)

// triageHandler serves /triage?pid=N&seconds=S: the target's findings
// over the next S seconds (10 by default). The window's events of the
// target's always-on session go through triage's own analyses (the tap:
// the code `clrspy triage --pid` runs, no session of its own), and the
// CPU demand and busiest thread come from /proc schedstat as triage's
// do, so both judge a window alike. JSON (the document of
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
		mon, tp, st, sid := t.mon, t.tap, t.stream, t.ctrSID
		d.mu.Unlock()
		if mon == nil || tp == nil || st == nil {
			http.Error(w, fmt.Sprintf("pid %s: no session yet", pid), http.StatusServiceUnavailable)
			return
		}
		procPid := t.procPid()
		set := analysis.NewSet()
		a := triage.Register(set, triage.Options{Target: "--pid " + pid, CounterSessionID: sid, Refine: true})
		set.Start(st.Header())
		var sched *procfs.DemandSampler
		if procPid > 0 {
			sched = procfs.StartThreadDemand(procPid, 500*time.Millisecond)
			nm := cdac.NewNamer(procPid) // lock types from its memory (.NET 9+)
			defer nm.Close()
			a.SetObjectTypes(nm.Names)
		}
		prev := mon.Snapshot()
		var m0 *memory.Sample
		if t.hostPid > 0 {
			if s, _, err := readMemory(t.hostPid); err == nil {
				m0 = &s
			}
		}
		tp.attach(set)
		select {
		case <-r.Context().Done():
		case <-time.After(span):
		}
		tp.detach(set)
		cores, demand := runtime.NumCPU(), -1.0
		if sched != nil {
			demand = sched.Pct(cores)
		}
		if r.Context().Err() != nil {
			return
		}
		cur := mon.Snapshot()
		// A heap snapshot's GC in the window is the tool's: its session's
		// gcpause marked it (the window's stream has no heap dump).
		d.mu.Lock()
		dumps := slices.Clone(t.dumpGCs)
		d.mu.Unlock()
		for _, n := range dumps {
			a.MarkHeapDump(n)
		}
		a.SetCPU(cores, demand)
		if sched != nil {
			if tid, pct := sched.Busiest(); pct > 0 {
				a.SetBusiestThread(tid, procfs.Comm(procPid, tid), pct)
			}
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
		if m0 != nil {
			f.Memory.Split = windowSplit(t, *m0)
		}
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

// procPid is the target's pid in clrspy's namespace for /proc (0: not
// visible).
func (t *target) procPid() int {
	if t.hostPid == 0 && t.kind != source.Listen {
		return t.pid
	}
	return t.hostPid
}
