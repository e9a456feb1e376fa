package triage

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/clrspy/clrspy/memory"
)

// Area is what a finding is about.
type Area string

// Areas, in the order they are listed when nothing else ranks them.
const (
	AreaGC         Area = "gc"
	AreaMemory     Area = "memory"
	AreaLocks      Area = "locks"
	AreaThreadPool Area = "threadpool"
	AreaExceptions Area = "exceptions"
	AreaCPU        Area = "cpu"
)

// Areas lists every area.
var Areas = []Area{AreaGC, AreaMemory, AreaLocks, AreaThreadPool, AreaExceptions, AreaCPU}

// Severity ranks findings.
type Severity int

// Severities.
const (
	Info Severity = iota
	Warning
	Critical
)

var severityNames = [...]string{"info", "warning", "critical"}

func (s Severity) String() string { return severityNames[s] }

// MarshalText writes the severity's name (JSON).
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a severity's name.
func (s *Severity) UnmarshalText(b []byte) error {
	for i, n := range severityNames {
		if n == string(b) {
			*s = Severity(i)
			return nil
		}
	}
	return fmt.Errorf("unknown severity %q", b)
}

// Finding is one judgement: what, how bad, the figures, what to run next.
type Finding struct {
	Area     Area           `json:"area"`
	Severity Severity       `json:"severity"`
	Title    string         `json:"title"`
	Evidence map[string]any `json:"evidence"`
	Next     string         `json:"next"`
	// Rule is the threshold key that decided (empty for an area's info).
	Rule string `json:"rule,omitempty"`
	// ImpactPct is the share of the application's time the finding
	// costs (stopped by the runtime, threads waiting on locks), when the
	// figures measure one; it ranks findings of one severity first.
	ImpactPct float64 `json:"impact_pct,omitempty"`
	// Score is the figure over its threshold (ranks findings of one
	// severity and impact: the further past its threshold, the higher).
	Score float64 `json:"-"`
}

// rule is one row of the finding rules: a figure of the facts judged
// against the threshold of the same key.
type rule struct {
	key   string
	value func(f *Facts) (float64, bool) // false: not judged
	title func(f *Facts, v float64) string
	next  func(f *Facts) string
	// impact is the share of the application's time the finding costs
	// (nil: the figures measure none).
	impact func(f *Facts) float64
}

func (f *Facts) cmd(name, extra string) string {
	if strings.HasPrefix(f.Target, "-- ") {
		return "clrspy " + name + " " + f.Target // launched: runs the program again
	}
	s := "clrspy " + name + " " + f.Target
	if strings.HasPrefix(f.Target, "--pid") && extra != "" {
		s += " " + extra
	}
	return s
}

func gcNext(f *Facts) string   { return f.cmd("gc", "--duration 60s") }
func lockNext(f *Facts) string { return f.cmd("locks", "--duration 30s") }

// stacksNext: every thread's stack and wait (stacks attaches; it starts
// no program, so a launched target's next step is its locks).
func stacksNext(f *Facts) string {
	if strings.HasPrefix(f.Target, "--pid") {
		return "clrspy stacks " + f.Target
	}
	return lockNext(f)
}

// tidCycle is "threads 12 → 13 → 12".
func tidCycle(c []uint64) string {
	var b strings.Builder
	b.WriteString("threads ")
	for _, t := range append(slices.Clone(c), c[0]) {
		if b.Len() > len("threads ") {
			b.WriteString(" → ")
		}
		fmt.Fprint(&b, t)
	}
	return b.String()
}

// rules: the findings each area can raise, judged in this order.
var rules = []rule{
	{"gc.pause_pct", func(f *Facts) (float64, bool) { return f.GC.PausePct, f.GC.Seen && f.WindowSec > 0 },
		func(f *Facts, v float64) string {
			return fmt.Sprintf("GC pauses stop the process %.1f%% of the time (%d GCs, %.0f ms as the runtime counts its pauses)", v, f.GC.Count, f.GC.PausedMs)
		}, gcNext, gcImpact},
	{"gc.max_pause_ms", func(f *Facts) (float64, bool) { return f.GC.MaxPauseMs, f.GC.Seen },
		func(f *Facts, v float64) string {
			if f.GC.SnapshotGC != 0 && f.GC.MaxPauseGC == f.GC.SnapshotGC {
				return fmt.Sprintf("longest GC pause %.0f ms: the heap snapshot's own GC (gen%d %s), taken by the tool, not the application", v, f.GC.MaxPauseGen, f.GC.MaxPauseType)
			}
			return fmt.Sprintf("longest GC stop %.0f ms, suspension to restart (gen%d %s, %s)", v, f.GC.MaxPauseGen, f.GC.MaxPauseType, f.GC.MaxPauseReason)
		}, gcNext, gcImpact},
	{"gc.gen2_blocking_per_min", func(f *Facts) (float64, bool) {
		return perMin(f, f.GC.Gen2Blocking), f.GC.Seen && f.GC.Gen2Blocking >= MinGCsForRate
	},
		func(f *Facts, v float64) string {
			return fmt.Sprintf("%d blocking gen2 GCs (%.0f/min)", f.GC.Gen2Blocking, v)
		}, gcNext, gcImpact},
	{"gc.induced_per_min", func(f *Facts) (float64, bool) { return perMin(f, f.GC.Induced), f.GC.Seen && f.GC.Induced > 0 },
		func(f *Facts, v float64) string {
			return fmt.Sprintf("%d induced GCs (%.0f/min): something calls GC.Collect", f.GC.Induced, v)
		}, gcNext, gcImpact},
	{"gc.loh_triggered_per_min", func(f *Facts) (float64, bool) {
		return perMin(f, f.GC.LOHTriggered), f.GC.Seen && f.GC.LOHTriggered >= MinGCsForRate
	},
		func(f *Facts, v float64) string {
			return fmt.Sprintf("%d GCs triggered by large-object allocations (%.0f/min)", f.GC.LOHTriggered, v)
		}, gcNext, gcImpact},
	{"gc.max_suspend_ms", func(f *Facts) (float64, bool) { return f.GC.MaxSuspendMs, f.GC.Seen },
		func(f *Facts, v float64) string {
			return fmt.Sprintf("a suspension took %.0f ms to stop the threads (one did not reach a safe point)", v)
		}, gcNext, gcImpact},
	{"gc.other_suspension_pct", func(f *Facts) (float64, bool) {
		return f.GC.OtherPct, f.GC.Seen && f.WindowSec > 0 && f.GC.OtherSuspensions > 0
	}, otherSuspensionTitle, gcNext, func(f *Facts) float64 { return f.GC.OtherPct }},
	{"gc.requests_hit_pct", func(f *Facts) (float64, bool) {
		return reqValue(f, func(r *RequestFacts) float64 { return r.HitPct })
	}, func(f *Facts, _ float64) string { return requestsTitle(f, true) }, requestsNext, requestsImpact},
	{"gc.request_paused_pct", func(f *Facts) (float64, bool) {
		return reqValue(f, func(r *RequestFacts) float64 { return r.PausedPct })
	}, func(f *Facts, _ float64) string { return requestsTitle(f, false) }, requestsNext, requestsImpact},
	{"gc.alloc_mb_per_sec", func(f *Facts) (float64, bool) { return f.GC.AllocMBPerSec, f.GC.HasAllocRate },
		func(f *Facts, v float64) string { return fmt.Sprintf("allocating %.0f MB/s", v) },
		func(f *Facts) string { return f.cmd("heap", "--duration 30s") }, gcImpact},
	{"memory.old_growth_mb_per_min", func(f *Facts) (float64, bool) {
		m := &f.Memory
		from, gcs := m.trendFrom()
		return m.OldGrowthMBMin, m.Seen && gcs >= MinOldGrowthGCs && m.LastOldMB-from >= MinOldGrowthMB && m.trendSec() > 0
	}, func(f *Facts, v float64) string {
		m := &f.Memory
		from, _ := m.trendFrom()
		s := fmt.Sprintf("gen2+LOH grew %.0f MB after GCs in %.0f s (%.0f MB/min): a leak suspect", m.LastOldMB-from, m.trendSec(), v)
		if m.Settled && m.WarmupMB >= 1 {
			s += fmt.Sprintf(", after the %.0f MB of its warm-up", m.WarmupMB)
		}
		return s
	}, snapshotNext, nil},
	{"memory.gen2_fragmentation_pct", func(f *Facts) (float64, bool) {
		return f.Memory.Gen2FragPct, f.Memory.HasFragmentation && f.Memory.Gen2MB >= MinFragmentationMB
	}, func(f *Facts, v float64) string {
		return fmt.Sprintf("gen2 is %.0f%% free space after the last GC (%.0f MB)", v, f.Memory.Gen2MB)
	}, gcNext, nil},
	{"memory.pinned_objects", func(f *Facts) (float64, bool) { return float64(f.Memory.MaxPinned), f.Memory.Seen },
		func(f *Facts, v float64) string { return fmt.Sprintf("%.0f objects pinned during a GC", v) }, gcNext, nil},
	{"memory.resident_growth_mb_per_min", func(f *Facts) (float64, bool) {
		sp := f.Memory.Split
		if sp == nil {
			return 0, false
		}
		// A growing GC heap is the old generations' rule's (the GC's own
		// figures); this one judges what the GC cannot see.
		return sp.GrowingMBPerMin, sp.GrowingKind != "" && sp.GrowingKind != string(memory.GCHeap) && sp.GrowingDeltaMB >= MinResidentGrowthMB
	}, func(f *Facts, v float64) string { return f.Memory.Split.Growth }, splitNext, nil},
	{"memory.cgroup_limit_pct", func(f *Facts) (float64, bool) {
		sp := f.Memory.Split
		if sp == nil {
			return 0, false
		}
		return sp.LimitPct, sp.LimitMB > 0
	}, func(f *Facts, v float64) string { return f.Memory.Split.Limit }, splitNext, nil},
	{"locks.wait_pct", func(f *Facts) (float64, bool) { return f.Locks.WaitPct, f.Locks.Seen },
		func(f *Facts, v float64) string {
			s := fmt.Sprintf("threads wait on locks %.0f%% of their time (%d waits, %.0f ms)", v, f.Locks.Contentions, f.Locks.WaitMs)
			if f.Locks.TopLock != "" {
				s += "; top: " + f.Locks.TopLock
			}
			return s
		}, lockNext, func(f *Facts) float64 { return f.Locks.WaitPct }},
	{"locks.deadlocked_threads", func(f *Facts) (float64, bool) {
		n := 0
		for _, c := range f.Locks.Deadlocks {
			n += len(c)
		}
		return float64(n), n > 0
	}, func(f *Facts, v float64) string {
		var cs []string
		for _, c := range f.Locks.Deadlocks {
			cs = append(cs, tidCycle(c))
		}
		return fmt.Sprintf("deadlock: %s (each waits for a lock the next holds, %d s or longer)", strings.Join(cs, "; "), MinBlockedSec)
	}, stacksNext, nil},
	{"locks.blocked_on_one_lock", func(f *Facts) (float64, bool) { return float64(f.Locks.MostBlocked), f.Locks.MostBlocked > 0 },
		func(f *Facts, v float64) string {
			s := fmt.Sprintf("%.0f threads blocked %d s or longer on one lock (%s)", v, MinBlockedSec, f.Locks.BlockedLock)
			if f.Locks.BlockedOwnerTid != 0 {
				s += fmt.Sprintf(", held by thread %d", f.Locks.BlockedOwnerTid)
			}
			return s
		}, stacksNext, nil},
	{"threadpool.queue_length", func(f *Facts) (float64, bool) { return f.ThreadPool.QueueMax, f.ThreadPool.Seen },
		func(f *Facts, v float64) string {
			return fmt.Sprintf("thread-pool queue reached %.0f work items (%.0f → %.0f threads): starvation",
				v, f.ThreadPool.ThreadsFirst, f.ThreadPool.ThreadsMax)
		}, tpNext, nil},
	{"threadpool.thread_growth", func(f *Facts) (float64, bool) {
		return f.ThreadPool.ThreadsMax - f.ThreadPool.ThreadsFirst, f.ThreadPool.Seen
	}, func(f *Facts, v float64) string {
		return fmt.Sprintf("thread pool grew by %.0f threads (%.0f → %.0f): work items block", v, f.ThreadPool.ThreadsFirst, f.ThreadPool.ThreadsMax)
	}, tpNext, nil},
	{"exceptions.per_sec", func(f *Facts) (float64, bool) { return f.Exceptions.PerSec, f.Exceptions.Seen },
		func(f *Facts, v float64) string {
			s := fmt.Sprintf("%.0f exceptions/s (%.0f thrown)", v, f.Exceptions.Count)
			if f.Exceptions.TopType != "" {
				s += "; top: " + f.Exceptions.TopType
			}
			return s
		}, func(f *Facts) string { return f.cmd("exceptions", "--duration 30s") }, nil},
	{"cpu.demand_pct", func(f *Facts) (float64, bool) { return f.CPU.Pct, f.CPU.Seen && f.CPU.Source != "samples" },
		func(f *Facts, v float64) string {
			s := fmt.Sprintf("process wants %.0f%% of %d cores", v, f.CPU.Cores)
			if len(f.CPU.TopMethods) > 0 {
				s += fmt.Sprintf("; top: %s %.0f%%", f.CPU.TopMethods[0].Name, f.CPU.TopMethods[0].Pct)
			}
			return s
		}, profileNext, nil},
	{"cpu.thread_pct", func(f *Facts) (float64, bool) { return f.CPU.BusiestThreadPct, f.CPU.BusiestThreadPct > 0 },
		func(f *Facts, v float64) string {
			name := fmt.Sprintf("thread %d", f.CPU.BusiestThreadID)
			if f.CPU.BusiestThreadName != "" {
				name += " (" + f.CPU.BusiestThreadName + ")"
			}
			s := fmt.Sprintf("one thread saturates a core: %s wants %.0f%% of a core", name, v)
			if len(f.CPU.TopMethods) > 0 {
				s += "; top: " + methodsText(f.CPU.TopMethods, 2)
			}
			return s
		}, profileNext, nil},
}

func profileNext(f *Facts) string { return f.cmd("profile", "--duration 30s") }

// reqValue is a request figure, judged from MinRequests requests on.
func reqValue(f *Facts, v func(*RequestFacts) float64) (float64, bool) {
	if f.Requests == nil || f.Requests.Requests < MinRequests {
		return 0, false
	}
	return v(f.Requests), true
}

// requestsTitle says both request figures, the one judged (hit: the
// share of requests) first.
func requestsTitle(f *Facts, hit bool) string {
	r := f.Requests
	var s string
	if hit {
		s = fmt.Sprintf("GC pauses hit %.1f%% of requests (%d of %d; %.1f%% of request time, %.0f ms)",
			r.HitPct, r.HitByGC, r.Requests, r.PausedPct, r.PausedMs)
	} else {
		s = fmt.Sprintf("GC pauses froze %.1f%% of request time (%.0f ms; %d of %d requests hit)",
			r.PausedPct, r.PausedMs, r.HitByGC, r.Requests)
	}
	if r.WorstRoute != "" {
		s += fmt.Sprintf("; most on %s: %d of %d, p99 %.1f ms hit against %.1f ms not hit",
			r.WorstRoute, r.WorstRouteHit, r.WorstRouteCount, r.WorstRouteP99HitMs, r.WorstRouteP99NotHitMs)
	}
	return s
}

func requestsNext(f *Facts) string { return f.cmd("requests", "--duration 30s") }

func requestsImpact(f *Facts) float64 { return f.Requests.PausedPct }

func gcImpact(f *Facts) float64 { return f.GC.PausePct }

// methodsText names the first n methods with their shares.
func methodsText(ms []Method, n int) string {
	var p []string
	for _, m := range ms[:min(n, len(ms))] {
		p = append(p, fmt.Sprintf("%s %.0f%%", m.Name, m.Pct))
	}
	return strings.Join(p, ", ")
}

// otherSuspensionTitle says how long the runtime stopped the process for
// reasons other than a GC, and for which: stop-the-world time is what the
// application feels, whatever its reason.
func otherSuspensionTitle(f *Facts, v float64) string {
	g := &f.GC
	s := fmt.Sprintf("the runtime stopped the process %d times for other reasons than GC: %.0f ms, %.1f%% of the time (longest %.1f ms", g.OtherSuspensions, g.OtherStoppedMs, v, g.OtherMaxMs)
	if gcStop := g.StoppedMs - g.OtherStoppedMs; gcStop > 0 {
		s += fmt.Sprintf("; %.0f× the GCs' stopped time", g.OtherStoppedMs/gcStop)
	}
	s += ")"
	if g.OtherTopReason != "" {
		s += "; mostly " + g.OtherTopReason
	}
	if g.ProfilerInStream && g.OtherTopReason == "SuspendOther" {
		s += ", which counts the sample profiler's own suspensions: a cost of the measurement"
	}
	return s
}

// trendFrom is the old generations' size the judged trend starts from and
// the GCs it covers: from the heap's settling when the series said, else
// from the first GC.
func (m *MemoryFacts) trendFrom() (float64, int) {
	if m.Settled {
		return m.SettledOldMB, m.SettledGCs
	}
	return m.FirstOldMB, m.GCs
}

func (m *MemoryFacts) trendSec() float64 {
	if m.Settled {
		return m.SettledSec
	}
	return m.SpanSec
}

func snapshotNext(f *Facts) string {
	if !strings.HasPrefix(f.Target, "--pid") {
		return f.cmd("gc", "")
	}
	return fmt.Sprintf("clrspy snapshot %[1]s -o a.gcdump; sleep 60; clrspy snapshot %[1]s -o b.gcdump; clrspy snapshot --diff a.gcdump b.gcdump", f.Target)
}

func tpNext(f *Facts) string { return f.cmd("threadpool", "--duration 30s") }

func perMin(f *Facts, n int) float64 {
	if f.WindowSec <= 0 {
		return 0
	}
	return float64(n) * 60 / f.WindowSec
}

// Findings judges the facts: every figure past its warning threshold is a
// finding; an area with data and none past a threshold gets one info
// finding with its figures. Most severe first; within a severity, the
// figure furthest past its threshold first.
func Findings(f *Facts) []Finding {
	var out []Finding
	flagged := map[Area]bool{}
	for i := range rules {
		r := &rules[i]
		v, ok := r.value(f)
		if !ok {
			continue
		}
		t := threshold(r.key)
		sev := Judge(r.key, v)
		if sev == Info {
			continue
		}
		lim := t.Warning
		if sev == Critical {
			lim = t.Critical
		}
		flagged[t.Area] = true
		x := Finding{Area: t.Area, Severity: sev, Title: r.title(f, v), Evidence: Evidence(f, t.Area),
			Next: r.next(f), Rule: r.key, Score: v / lim}
		if r.impact != nil {
			x.ImpactPct = float64(int64(r.impact(f)*100+0.5)) / 100
		}
		out = append(out, x)
	}
	for _, a := range Areas {
		if flagged[a] {
			continue
		}
		if title, ok := calm(f, a); ok {
			out = append(out, Finding{Area: a, Severity: Info, Title: title, Evidence: Evidence(f, a), Next: calmNext(f, a)})
		}
	}
	slices.SortStableFunc(out, func(x, y Finding) int {
		if x.Severity != y.Severity {
			return int(y.Severity - x.Severity)
		}
		// Of one severity, what costs the application more of its time
		// first; then the figure furthest past its threshold.
		if c := cmp.Compare(y.ImpactPct, x.ImpactPct); c != 0 {
			return c
		}
		switch {
		case x.Score > y.Score:
			return -1
		case x.Score < y.Score:
			return 1
		}
		return slices.Index(Areas, x.Area) - slices.Index(Areas, y.Area)
	})
	return out
}

// Worst is the highest severity of findings (Info when there are none).
func Worst(fs []Finding) Severity {
	if len(fs) == 0 {
		return Info
	}
	return fs[0].Severity
}

func calmNext(f *Facts, a Area) string {
	switch a {
	case AreaMemory:
		if f.Memory.Split != nil {
			return splitNext(f)
		}
		return gcNext(f)
	case AreaGC:
		return gcNext(f)
	case AreaLocks:
		return lockNext(f)
	case AreaThreadPool:
		return tpNext(f)
	case AreaExceptions:
		return f.cmd("exceptions", "--duration 30s")
	}
	return f.cmd("profile", "--duration 30s")
}

// calm titles an area with data and nothing past a threshold.
func calm(f *Facts, a Area) (string, bool) {
	switch a {
	case AreaGC:
		if !f.GC.Seen {
			return "", false
		}
		t := fmt.Sprintf("GC calm: %s, %.1f%% paused (the runtime's count), longest stop %.0f ms (suspension to restart)", gcsText(f.GC.Count), f.GC.PausePct, f.GC.MaxPauseMs)
		if f.GC.SnapshotGC != 0 {
			t += fmt.Sprintf("; GC %d is the heap snapshot's own (%.1f ms), not counted", f.GC.SnapshotGC, f.GC.SnapshotPauseMs)
		}
		return t, true
	case AreaMemory:
		var parts []string
		if f.Memory.Seen {
			parts = append(parts, fmt.Sprintf("gen2+LOH %.0f → %.0f MB after GCs", f.Memory.FirstOldMB, f.Memory.LastOldMB))
		}
		if sp := f.Memory.Split; sp != nil {
			if sp.Growth != "" {
				parts = append(parts, sp.Growth)
			} else {
				parts = append(parts, fmt.Sprintf("RSS %.0f MB", sp.RSSLastMB))
			}
			if sp.Limit != "" {
				parts = append(parts, sp.Limit)
			}
		}
		if len(parts) == 0 {
			return "", false
		}
		if !f.Memory.Seen {
			return "memory steady: " + strings.Join(parts, "; "), true
		}
		// The GC's own figures say it in memoryCalm's words; the split adds
		// what the GC cannot see.
		return strings.Join(append([]string{memoryCalm(&f.Memory)}, parts[1:]...), "; "), true
	case AreaLocks:
		if !f.Locks.Seen {
			return "", false
		}
		return fmt.Sprintf("locks calm: %d waits, %.1f%% of thread time", f.Locks.Contentions, f.Locks.WaitPct), true
	case AreaThreadPool:
		if !f.ThreadPool.Seen {
			return "", false
		}
		return fmt.Sprintf("thread pool calm: queue ≤ %.0f, %.0f threads", f.ThreadPool.QueueMax, f.ThreadPool.ThreadsMax), true
	case AreaExceptions:
		if !f.Exceptions.Seen {
			return "", false
		}
		return fmt.Sprintf("exceptions calm: %.1f/s", f.Exceptions.PerSec), true
	case AreaCPU:
		if !f.CPU.Seen {
			return "", false
		}
		if f.CPU.Source == "samples" && len(f.CPU.TopMethods) > 0 {
			m := f.CPU.TopMethods[0]
			return fmt.Sprintf("CPU: no usage figure in this stream; top method %s %.0f%%", m.Name, m.Pct), true
		}
		return fmt.Sprintf("CPU calm: %.0f%% of %d cores", f.CPU.Pct, f.CPU.Cores), true
	}
	return "", false
}

// gcsText is "1 GC", "3 GCs".
func gcsText(n int) string {
	if n == 1 {
		return "1 GC"
	}
	return fmt.Sprintf("%d GCs", n)
}

// memoryCalm titles a memory trend below the leak threshold: "steady"
// only when it is (under 1 MB/min); a heap still growing from its start
// is "warming up"; one GC or none apart is no trend at all.
func memoryCalm(m *MemoryFacts) string {
	sizes := fmt.Sprintf("gen2+LOH %.0f → %.0f MB after GCs", m.FirstOldMB, m.LastOldMB)
	from, gcs := m.trendFrom()
	switch {
	case m.trendSec() <= 0 || gcs < 2:
		return fmt.Sprintf("memory: %s, %s with heap statistics: too few to judge a trend", sizes, gcsText(m.GCs))
	case !m.Settled && m.GCs < MinOldGrowthGCs:
		return fmt.Sprintf("memory: %s over %.0f s: too few GCs to judge a trend", sizes, m.SpanSec)
	case m.Settled && m.WarmupMB >= MinOldGrowthMB && m.LastOldMB-from < MinOldGrowthMB:
		return fmt.Sprintf("memory warming up, then settled: %s (%.0f MB of it before %.0f s in, %+.0f MB/min since)", sizes, m.WarmupMB, m.SpanSec-m.SettledSec, m.OldGrowthMBMin)
	case m.OldGrowthMBMin >= threshold("memory.old_growth_mb_per_min").Warning:
		// Fast, but too little to call a leak (the guards).
		return fmt.Sprintf("memory: %s, %.0f MB of it in %.1f s after the warm-up (%.0f MB/min): too little to call a leak (from %d MB)", sizes, m.LastOldMB-from, m.trendSec(), m.OldGrowthMBMin, MinOldGrowthMB)
	case m.OldGrowthMBMin >= -1 && m.OldGrowthMBMin < 1:
		return "memory steady: " + sizes
	case m.OldGrowthMBMin < 0:
		return fmt.Sprintf("memory shrinking: %s (%.0f MB/min)", sizes, m.OldGrowthMBMin)
	}
	return fmt.Sprintf("memory grows slowly, %.0f MB/min: %s (a leak suspect from %.0f MB/min)", m.OldGrowthMBMin, sizes, threshold("memory.old_growth_mb_per_min").Warning)
}

// Evidence is the figures of area a, as a JSON object.
func Evidence(f *Facts, a Area) map[string]any {
	r := func(v float64) float64 { return float64(int64(v*100+0.5)) / 100 }
	switch a {
	case AreaGC:
		g := &f.GC
		m := map[string]any{"gcs": g.Count, "pause_pct": r(g.PausePct), "paused_ms": r(g.PausedMs),
			"gen2_blocking": g.Gen2Blocking, "induced": g.Induced, "loh_triggered": g.LOHTriggered, "window_sec": r(f.WindowSec)}
		if g.MaxPauseReason != "" { // the longest GC, when there was one
			m["max_pause_ms"], m["max_pause_gc"], m["max_pause_reason"] = r(g.MaxPauseMs), g.MaxPauseGC, g.MaxPauseReason
			m["max_pause_type"], m["max_pause_generation"], m["max_suspend_ms"] = g.MaxPauseType, g.MaxPauseGen, r(g.MaxSuspendMs)
		}
		if g.HasAllocRate {
			m["alloc_mb_per_sec"] = r(g.AllocMBPerSec)
		}
		m["stopped_ms"], m["stopped_pct"] = r(g.StoppedMs), r(g.StoppedPct)
		if g.OtherSuspensions > 0 {
			m["other_suspensions"], m["other_stopped_ms"], m["other_max_ms"] = g.OtherSuspensions, r(g.OtherStoppedMs), r(g.OtherMaxMs)
			m["other_pct"], m["other_top_reason"] = r(g.OtherPct), g.OtherTopReason
		}
		if q := f.Requests; q != nil {
			m["requests"], m["requests_hit_by_gc"], m["requests_hit_pct"] = q.Requests, q.HitByGC, r(q.HitPct)
			m["request_paused_ms"], m["request_paused_pct"] = r(q.PausedMs), r(q.PausedPct)
			if q.WorstRoute != "" {
				m["worst_route"], m["worst_route_requests"], m["worst_route_hit"] = q.WorstRoute, q.WorstRouteCount, q.WorstRouteHit
			}
		}
		return m
	case AreaMemory:
		m := &f.Memory
		e := map[string]any{"gcs_with_heap_stats": m.GCs, "first_old_mb": r(m.FirstOldMB), "last_old_mb": r(m.LastOldMB),
			"span_sec": r(m.SpanSec), "old_growth_mb_per_min": r(m.OldGrowthMBMin), "gen2_mb": r(m.Gen2MB), "loh_mb": r(m.LOHMB),
			"max_pinned_objects": m.MaxPinned}
		if m.HasFragmentation {
			e["gen2_fragmentation_pct"] = r(m.Gen2FragPct)
		}
		if m.Settled {
			e["settled_gcs"], e["settled_old_mb"], e["settled_sec"], e["warmup_mb"] = m.SettledGCs, r(m.SettledOldMB), r(m.SettledSec), r(m.WarmupMB)
		}
		if sp := m.Split; sp != nil {
			e["split_samples"], e["split_span_sec"], e["rss_first_mb"], e["rss_last_mb"] = sp.Samples, r(sp.SpanSec), r(sp.RSSFirstMB), r(sp.RSSLastMB)
			e["gc_heap_delta_mb"], e["native_heap_delta_mb"] = r(sp.GCHeapDeltaMB), r(sp.NativeHeapDeltaMB)
			if sp.GrowingKind != "" {
				e["growing_kind"], e["growing_delta_mb"], e["growing_mb_per_min"] = sp.GrowingKind, r(sp.GrowingDeltaMB), r(sp.GrowingMBPerMin)
			}
			if sp.LimitMB > 0 {
				e["cgroup_limit_mb"], e["cgroup_usage_mb"], e["cgroup_limit_pct"] = r(sp.LimitMB), r(sp.UsageMB), r(sp.LimitPct)
			}
		}
		return e
	case AreaLocks:
		l := &f.Locks
		e := map[string]any{"contentions": l.Contentions, "wait_ms": r(l.WaitMs), "threads": l.Threads, "wait_pct": r(l.WaitPct)}
		if l.TopLock != "" {
			e["top_lock"] = l.TopLock
			e["top_lock_wait_ms"] = r(l.TopWaitMs)
			e["top_lock_contentions"] = l.TopCount
		}
		if len(l.TopStack) > 0 {
			e["top_stack"] = l.TopStack
		}
		if len(l.Deadlocks) > 0 {
			e["deadlocks"] = l.Deadlocks
		}
		if l.MostBlocked > 0 {
			e["most_blocked"], e["blocked_lock"] = l.MostBlocked, l.BlockedLock
			if l.BlockedOwnerTid != 0 {
				e["blocked_owner_os_tid"] = l.BlockedOwnerTid
			}
		}
		return e
	case AreaThreadPool:
		t := &f.ThreadPool
		e := map[string]any{"source": t.Source, "queue_max": r(t.QueueMax), "queue_last": r(t.QueueLast),
			"threads_first": r(t.ThreadsFirst), "threads_max": r(t.ThreadsMax), "completed_per_sec": r(t.CompletedPerSec)}
		if t.Starvations > 0 {
			e["starvations"] = t.Starvations
		}
		if t.TopBlockingSite != "" {
			e["top_blocking_site"] = t.TopBlockingSite
		}
		return e
	case AreaExceptions:
		x := &f.Exceptions
		e := map[string]any{"source": x.Source, "count": r(x.Count), "per_sec": r(x.PerSec)}
		if x.TopType != "" {
			e["top_type"] = x.TopType
		}
		if x.TopSite != "" {
			e["top_site"] = x.TopSite
		}
		return e
	}
	c := &f.CPU
	e := map[string]any{"source": c.Source, "cores": c.Cores, "pct_of_cores": r(c.Pct)}
	if c.UsagePct >= 0 {
		e["usage_pct"] = r(c.UsagePct)
	}
	if len(c.TopMethods) > 0 {
		e["top_methods"] = c.TopMethods
	}
	if c.BusiestThreadPct > 0 {
		e["busiest_thread_pct"], e["busiest_thread_id"] = r(c.BusiestThreadPct), c.BusiestThreadID
		if c.BusiestThreadName != "" {
			e["busiest_thread_name"] = c.BusiestThreadName
		}
	}
	return e
}
