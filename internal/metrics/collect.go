package metrics

import (
	"maps"
	"runtime"
	"slices"
	"strconv"
	"time"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/exceptions"
	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/internal/fleet"
	"github.com/clrspy/clrspy/internal/monitor"
	"github.com/clrspy/clrspy/internal/procfs"
	"github.com/clrspy/clrspy/memory"
	"github.com/clrspy/clrspy/triage"
)

// Target is one monitored process as the exporter sees it.
type Target struct {
	// Pid is the pid label: the process id as clrspy sees it (a runtime in
	// another pid namespace that connected to the diagnostic port: the pid
	// it advertised). Process is the process label.
	Pid     string
	Process string
	// Up: a session is open on the process.
	Up bool
	// Snapshot is the monitor's model (nil before the first session).
	Snapshot *monitor.Snapshot
	// GC holds the pause and suspend histograms (nil: none yet).
	GC *GCHistograms
	// LastEventAge is how long ago the latest event of the session
	// happened (a stopped or hung process: it grows while Up stays 1).
	LastEventAge time.Duration
	// Threads is the process's thread count now (/proc; 0: unknown), the
	// lock-wait share's denominator as triage's.
	Threads int
	// HeapDumpGCs are the GCs heap snapshots induced (the tool's, not the
	// application's: out of clrspy_findings' induced GCs and pauses).
	HeapDumpGCs []uint32
	// HeapGrowth is the growth between the last two automatic heap
	// snapshots, the largest first (at most MaxHeapGrowth; nil: none).
	HeapGrowth []HeapGrowth
	// Memory is the process's latest memory splits, oldest first (nil:
	// not read); the last is exported, all of them judge triage's memory
	// finding (clrspy_findings).
	Memory []memory.Sample
	// Cgroup is the process's memory cgroup at the latest read (nil:
	// none visible).
	Cgroup *procfs.CgroupMemory
	// Cores are the machine's (0: CPUDemandPct unknown) and CPUDemandPct
	// the share of them the process's threads asked for over the memory
	// readings' span (procfs.DemandPct, triage's formula; -1: unknown),
	// judged by clrspy_findings as triage judges its window's.
	Cores        int
	CPUDemandPct float64
}

// Health is the fleet's own state.
type Health = fleet.Health

// targetSource is what the exporter reads at each scrape: a fleet (fleetSource)
// or a test's targets.
type targetSource interface {
	// targets lists the targets to export now; a target left out has no
	// series.
	targets() []Target
	health() Health
}

// fleetSource is a fleet's targets, as Targets reads them.
type fleetSource struct{ f *fleet.Fleet }

func (s fleetSource) targets() []Target { return Targets(s.f) }
func (s fleetSource) health() Health    { return s.f.Health() }

// histKey keeps a session's GC histograms (WatchGC).
type histKey struct{}

// HeapGrowthKey keeps a target's []HeapGrowth (its owner sets it as the
// target's heap snapshots show growth).
type HeapGrowthKey struct{}

// WatchGC keeps GC histograms for every session of f from now on (the
// pause and suspend histograms Targets exports).
func WatchGC(f *fleet.Fleet) {
	f.Watch(fleet.Watcher{Prepare: func(s *fleet.Session, opts *monitor.Options) []analysis.Analyzer {
		h := NewGCHistograms()
		s.SetValue(histKey{}, h)
		onGC := opts.OnGC
		opts.OnGC = func(g *gcpause.GC) {
			h.Observe(g)
			if onGC != nil {
				onGC(g)
			}
		}
		return nil
	}})
}

// Targets is every target of f that had a session, in discovery order,
// as the exporter sees it.
func Targets(f *fleet.Fleet) []Target {
	srcs := f.Sources(false)
	out := make([]Target, 0, len(srcs))
	for _, t := range srcs {
		sess, up := t.Session(), t.Up()
		if sess == nil {
			continue
		}
		snap := sess.Monitor().Snapshot()
		// The latest event's time is the runtime's clock (the session's
		// sync time plus its timestamps), the same host clock as ours.
		threads := 0
		if pid := t.ProcPid(); up && pid > 0 {
			if ths, err := procfs.Threads(pid); err == nil {
				threads = len(ths)
			}
		}
		hist, _ := sess.Value(histKey{}).(*GCHistograms)
		grown, _ := t.Value(HeapGrowthKey{}).([]HeapGrowth)
		mt := Target{Pid: t.PidLabel(), Process: t.Name(), Up: up, Snapshot: snap, GC: hist,
			LastEventAge: time.Since(snap.Time), HeapGrowth: grown, Threads: threads, HeapDumpGCs: t.HeapDumps()}
		if up {
			mt.Memory, mt.Cgroup = t.Memory()
			mt.Cores = runtime.NumCPU()
			mt.CPUDemandPct = t.CPUDemandPct(mt.Cores)
		}
		out = append(out, mt)
	}
	return out
}

// sink receives the samples of one walk.
type sink interface {
	value(f *Family, v float64, lv []string)
	// hist takes a classic histogram and, when n is set, a native one
	// over the same values.
	hist(f *Family, h analysis.Histogram, n *Native, lv []string)
}

// walk turns the source's state into samples.
func walk(src targetSource, s sink) {
	for _, t := range src.targets() {
		walkTarget(&t, s)
	}
	h := src.health()
	for _, r := range slices.Sorted(maps.Keys(h.AttachErrors)) {
		s.value(famAttachErrors, float64(h.AttachErrors[r]), []string{r})
	}
	s.value(famSessions, float64(h.Sessions), nil)
	for _, r := range slices.Sorted(maps.Keys(h.CaptureErrors)) {
		s.value(famCaptureErrors, float64(h.CaptureErrors[r]), []string{r})
	}
}

func walkTarget(t *Target, s sink) {
	lv := func(extra ...string) []string { return append([]string{t.Pid, t.Process}, extra...) }
	up := 0.0
	if t.Up {
		up = 1
	}
	s.value(famUp, up, lv())
	for _, g := range t.HeapGrowth {
		s.value(famHeapGrowth, float64(g.Bytes), lv(g.Type))
	}
	walkMemory(t, lv, s)
	snap := t.Snapshot
	if snap == nil {
		return
	}
	s.value(famInfo, 1, lv(snap.Process.RuntimeVersion, snap.Process.GC.Kind))
	s.value(famLastEventAge, max(t.LastEventAge, 0).Seconds(), lv())
	s.value(famLost, float64(snap.Session.EventsLost), lv())
	g := &snap.GC
	// Totals run from the process start where the runtime said what it
	// counted before the session (monitor.BeforeSession).
	var before monitor.BeforeSession
	if g.BeforeSession != nil {
		before = *g.BeforeSession
	}
	// A total the GC events' own numbering shows short (GCs before the
	// session, their generations and pauses not said yet) is left out
	// rather than exported low.
	if g.BeforeSession != nil || g.NumberedBefore == 0 {
		for i := range gcpause.GenKeys {
			s.value(famCollections, float64(g.Gen(i).Count+before.Generations[i]), lv(genNames[i]))
		}
		s.value(famPauseTime, (g.StoppedMS+before.PauseRuntimeMS)/1e3, lv())
		s.value(famPauseRuntime, (g.TotalPauseRuntimeMS+before.PauseRuntimeMS)/1e3, lv())
	}
	for i, v := range g.HeapSizeAfterBytes {
		if v.Valid() {
			s.value(famHeapSize, float64(v), lv(genNames[i]))
		} else if c := heapSizeCounter(snap, genNames[i]); c >= 0 {
			s.value(famHeapSize, c, lv(genNames[i]))
		}
	}
	if t.GC != nil {
		t.GC.pauses(func(gen, typ string, h analysis.Histogram, n *Native) { s.hist(famPause, h, n, lv(gen, typ)) })
		sh, sn := t.GC.suspendHist()
		s.hist(famSuspend, sh, sn, lv())
	}
	for _, r := range g.SuspensionsByReason {
		if r.Reason.IsGC() {
			// GC suspensions are the pause families'.
			continue
		}
		s.value(famSuspensions, float64(r.Count), lv(r.Reason.String()))
		s.value(famSuspended, float64(r.TotalNanos)/1e6/1e3, lv(r.Reason.String())) // as ms, then s: the exposition's bytes unchanged
	}
	for i, b := range g.PromotedBytes {
		s.value(famPromoted, float64(b), lv(genNames[i]))
	}
	s.value(famContentions, float64(snap.Locks.Contentions+before.LockContentions), lv())
	s.hist(famLockWait, snap.Locks.WaitHistogram, nil, lv())
	s.value(famDeadlocks, float64(snap.Locks.Deadlocks), lv())
	s.value(famBlocked, float64(snap.Locks.Blocked), lv("lock"))
	if e := snap.Exceptions; e != nil {
		for _, ty := range e.Types {
			for _, site := range ty.ThrowSites {
				s.value(famExceptionSites, float64(site.Count), lv(ty.Type, site.Site))
			}
			if len(ty.ThrowSites) == 0 {
				s.value(famExceptionSites, float64(ty.Count), lv(ty.Type, exceptions.OtherSites))
			}
		}
	}
	if tp := snap.ThreadPool; tp != nil {
		s.value(famTPEpisodes, float64(tp.Episodes), lv())
		for _, r := range tp.Injections {
			s.value(famTPInjections, float64(r.Count), lv(r.Reason))
		}
		s.value(famTPBlocked, tp.BlockedSec, lv())
	}
	walkRequests(snap, lv, s)
	walkFindings(t, snap, lv, s)
	walkCounters(snap, lv, s)
}

// walkFindings judges the snapshot's figures since the session began
// (triage's thresholds) and exports how many findings each area has at
// each severity, zeros included, so an alert can test for one.
func walkFindings(t *Target, snap *monitor.Snapshot, lv func(...string) []string, s sink) {
	demand := -1.0
	if t.Cores > 0 {
		demand = t.CPUDemandPct
	}
	f := monitor.TriageFacts(snap, monitor.TriageEnv{Target: "--pid " + t.Pid, Threads: t.Threads, Cores: t.Cores, CPUDemandPct: demand, HeapDumpGCs: t.HeapDumpGCs})
	f.Memory.Split = splitFacts(t)
	var n [len(triageSeverities)][]int
	for i := range n {
		n[i] = make([]int, len(triage.Areas))
	}
	for _, x := range triage.Findings(f) {
		n[x.Severity][slices.Index(triage.Areas, x.Area)]++
	}
	for ai, a := range triage.Areas {
		for si, sev := range triageSeverities {
			s.value(famFindings, float64(n[si][ai]), lv(string(a), sev.String()))
		}
	}
}

var triageSeverities = [...]triage.Severity{triage.Info, triage.Warning, triage.Critical}

// heapSizeCounter is the runtime counter's size of generation gen, -1
// when the session has none.
func heapSizeCounter(snap *monitor.Snapshot, gen string) float64 {
	if snap.Counters == nil {
		return -1
	}
	for i := range snap.Counters.Metrics {
		m := &snap.Counters.Metrics[i]
		if m.SemConv && m.Name == "dotnet.gc.last_collection.heap.size" && m.Attr("dotnet.gc.heap.generation") == gen {
			return m.Value
		}
	}
	return -1
}

// walkCounters exports the runtime's counters that have a family.
func walkCounters(snap *monitor.Snapshot, lv func(...string) []string, s sink) {
	if snap.Counters == nil {
		return
	}
	for i := range snap.Counters.Metrics {
		m := &snap.Counters.Metrics[i]
		if !m.SemConv {
			continue
		}
		cf := counterFamilies[m.Name]
		if cf == nil || len(m.Attributes) != len(cf.attrs) {
			continue
		}
		vals := make([]string, len(cf.attrs))
		ok := true
		for j, a := range cf.attrs {
			vals[j] = m.Attr(a)
			ok = ok && vals[j] != ""
		}
		if ok {
			s.value(cf.Family, m.Value, lv(vals...))
		}
	}
}

var counterFamilies = func() map[string]*counterFamily {
	m := make(map[string]*counterFamily, len(runtimeCounters))
	for i := range runtimeCounters {
		m[runtimeCounters[i].semconv] = &runtimeCounters[i]
	}
	return m
}()

// PidLabel formats a pid for the pid label.
func PidLabel(pid int) string { return strconv.Itoa(pid) }
