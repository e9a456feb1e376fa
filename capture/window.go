package capture

import (
	"fmt"
	"strconv"
	"time"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/counters"
	"github.com/clrspy/clrspy/ipc"
	"github.com/clrspy/clrspy/pageset"
	"github.com/clrspy/clrspy/perf"
	"github.com/clrspy/clrspy/report"
	"github.com/clrspy/clrspy/source"
	"github.com/clrspy/clrspy/stacks"
	"github.com/clrspy/clrspy/triage"
)

// TriageProviders are the providers of a triage session its Set cannot
// say (`triage`, the report page): Kestrel's request events
// (informational, no stacks: what GC pauses cost the requests of an
// ASP.NET Core server), the sample profiler with cpu, and the counters'
// (copts.SessionID is set for a meter session).
func TriageProviders(cpu bool, copts *counters.Options) []ipc.Provider {
	ps := []ipc.Provider{{Name: clrevents.ProviderKestrel, Level: clrevents.LevelInformational}}
	if cpu {
		ps = append(ps, ipc.SampleProfiler)
	}
	return append(ps, counters.Providers(copts)...)
}

// TriageTarget names st's target in the next commands a finding gives:
// an attached pid, a launched command (its process is gone when the next
// command runs), a file.
func TriageTarget(st *source.Stream) string {
	switch {
	case st.Kind == source.Launch:
		return "-- " + st.Name
	case st.Live():
		return "--pid " + strconv.Itoa(st.Pid)
	}
	return st.Name
}

// StartTriagePerf starts perf_event's sampler on st's process at 99 Hz
// per thread beside the session, for the top methods; nil (and a note on
// why) where the kernel does not permit it.
func StartTriagePerf(st *source.Stream, sym *stacks.Symbols, notice func(string)) *Perf {
	opts := perf.Options{Hz: 99}
	if _, err := perf.Check(st.Pid, opts); err != nil {
		notice(fmt.Sprintf("top methods: the perf sampler is unavailable (%v); --cpu adds the runtime's sampler", err))
		return nil
	}
	p, err := StartPerf(st, sym, opts, false, nil)
	if err != nil {
		notice(fmt.Sprintf("top methods: %v", err))
		return nil
	}
	return p
}

// LiveWindow is what a live triage window (`triage`, `report`) reads of
// its process beside the events: /proc's threads, mappings and image
// names (Proc, nil for a file) and the Window (a process visible here).
type LiveWindow struct {
	Proc *source.ProcWatcher
	win  *Window
}

// StartLiveWindow starts reading for st: the Window and Proc when st is
// live and its process visible (not a listened-to one), the memory split
// every second for an attached process (a launched program's start-up
// is no trend); Proc for any live st too with procOnListen.
func StartLiveWindow(st *source.Stream, procOnListen bool) *LiveWindow {
	l := &LiveWindow{}
	if !st.Live() {
		return l
	}
	visible := st.Kind != source.Listen && st.Pid > 0
	if visible {
		wo := WindowOptions{Pid: st.Pid}
		if st.Kind == source.Attach {
			wo.SplitPid, wo.Every = st.Pid, time.Second
		}
		l.win = StartWindow(wo)
	}
	if visible || procOnListen {
		l.Proc = source.WatchProc(st.Pid)
	}
	return l
}

// Window is the window reading the process (nil: not visible).
func (l *LiveWindow) Window() *Window { return l.win }

// Visible says whether the process is read (the Window runs).
func (l *LiveWindow) Visible() bool { return l.win != nil }

// End gives sym the process's image names and mappings, and a the
// window's facts; it returns the memory split's (Facts.Memory.Split; nil:
// none).
func (l *LiveWindow) End(a *triage.Analyzer, sym *stacks.Symbols) *triage.SplitFacts {
	if l.Proc != nil {
		sym.SetImageNamer(l.Proc.ImageNames)
	}
	l.Proc.Finish(sym.SetMappings)
	if l.win == nil {
		return nil
	}
	return l.win.End(a, func(tid uint64) string { return l.Proc.ThreadNames()[tid] })
}

// PageParts are the report page's parts from the page's analyses once
// st has ended: its title, input, clock and process.
func PageParts(st *source.Stream, an *pageset.Analyses, in report.Input) report.PageParts {
	pp := an.Parts()
	hdr := st.Header()
	end := st.End()
	pp.Title, pp.Input, pp.Start = st.Name, in, hdr.SyncTimeUTC
	pp.Pid = st.Pid
	if pp.Pid == 0 {
		pp.Pid = hdr.ProcessID
	}
	if end.Events > 0 {
		pp.FirstNanos, pp.LastNanos = hdr.Nanos(end.FirstTimestamp), hdr.Nanos(end.LastTimestamp)
	}
	return pp
}
