package triage

import (
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
	// Score is the figure over its threshold (ranks findings of one
	// severity: the further past its threshold, the higher).
	Score float64 `json:"-"`
}

// rule is one row of the finding rules: a figure of the facts judged
// against the threshold of the same key.
type rule struct {
	key   string
	value func(f *Facts) (float64, bool) // false: not judged
	title func(f *Facts, v float64) string
	next  func(f *Facts) string
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

// rules: the findings each area can raise, judged in this order.
var rules = []rule{
	{"gc.pause_pct", func(f *Facts) (float64, bool) { return f.GC.PausePct, f.GC.Seen && f.WindowSec > 0 },
		func(f *Facts, v float64) string {
			return fmt.Sprintf("GC pauses stop the process %.1f%% of the time (%d GCs)", v, f.GC.Count)
		}, gcNext},
	{"gc.max_pause_ms", func(f *Facts) (float64, bool) { return f.GC.MaxPauseMs, f.GC.Seen },
		func(f *Facts, v float64) string {
			if f.GC.SnapshotGC != 0 && f.GC.MaxPauseGC == f.GC.SnapshotGC {
				return fmt.Sprintf("longest GC pause %.0f ms: the heap snapshot's own GC (gen%d %s), taken by the tool, not the application", v, f.GC.MaxPauseGen, f.GC.MaxPauseType)
			}
			return fmt.Sprintf("longest GC pause %.0f ms (gen%d %s, %s)", v, f.GC.MaxPauseGen, f.GC.MaxPauseType, f.GC.MaxPauseReason)
		}, gcNext},
	{"gc.gen2_blocking_per_min", func(f *Facts) (float64, bool) {
		return perMin(f, f.GC.Gen2Blocking), f.GC.Seen && f.GC.Gen2Blocking >= MinGCsForRate
	},
		func(f *Facts, v float64) string {
			return fmt.Sprintf("%d blocking gen2 GCs (%.0f/min)", f.GC.Gen2Blocking, v)
		}, gcNext},
	{"gc.induced_per_min", func(f *Facts) (float64, bool) { return perMin(f, f.GC.Induced), f.GC.Seen && f.GC.Induced > 0 },
		func(f *Facts, v float64) string {
			return fmt.Sprintf("%d induced GCs (%.0f/min): something calls GC.Collect", f.GC.Induced, v)
		}, gcNext},
	{"gc.loh_triggered_per_min", func(f *Facts) (float64, bool) {
		return perMin(f, f.GC.LOHTriggered), f.GC.Seen && f.GC.LOHTriggered >= MinGCsForRate
	},
		func(f *Facts, v float64) string {
			return fmt.Sprintf("%d GCs triggered by large-object allocations (%.0f/min)", f.GC.LOHTriggered, v)
		}, gcNext},
	{"gc.max_suspend_ms", func(f *Facts) (float64, bool) { return f.GC.MaxSuspendMs, f.GC.Seen },
		func(f *Facts, v float64) string {
			return fmt.Sprintf("a suspension took %.0f ms to stop the threads (one did not reach a safe point)", v)
		}, gcNext},
	{"gc.alloc_mb_per_sec", func(f *Facts) (float64, bool) { return f.GC.AllocMBPerSec, f.GC.HasAllocRate },
		func(f *Facts, v float64) string { return fmt.Sprintf("allocating %.0f MB/s", v) },
		func(f *Facts) string { return f.cmd("heap", "--duration 30s") }},
	{"memory.old_growth_mb_per_min", func(f *Facts) (float64, bool) {
		m := &f.Memory
		return m.OldGrowthMBMin, m.Seen && m.GCs >= MinOldGrowthGCs && m.LastOldMB-m.FirstOldMB >= MinOldGrowthMB
	}, func(f *Facts, v float64) string {
		return fmt.Sprintf("gen2+LOH grew %.0f MB after GCs in %.0f s (%.0f MB/min): a leak suspect",
			f.Memory.LastOldMB-f.Memory.FirstOldMB, f.Memory.SpanSec, v)
	}, snapshotNext},
	{"memory.gen2_fragmentation_pct", func(f *Facts) (float64, bool) {
		return f.Memory.Gen2FragPct, f.Memory.HasFragmentation && f.Memory.Gen2MB >= MinFragmentationMB
	}, func(f *Facts, v float64) string {
		return fmt.Sprintf("gen2 is %.0f%% free space after the last GC (%.0f MB)", v, f.Memory.Gen2MB)
	}, gcNext},
	{"memory.pinned_objects", func(f *Facts) (float64, bool) { return float64(f.Memory.MaxPinned), f.Memory.Seen },
		func(f *Facts, v float64) string { return fmt.Sprintf("%.0f objects pinned during a GC", v) }, gcNext},
	{"memory.resident_growth_mb_per_min", func(f *Facts) (float64, bool) {
		sp := f.Memory.Split
		if sp == nil {
			return 0, false
		}
		// A growing GC heap is the old generations' rule's (the GC's own
		// figures); this one judges what the GC cannot see.
		return sp.GrowingMBPerMin, sp.GrowingKind != "" && sp.GrowingKind != string(memory.GCHeap) && sp.GrowingDeltaMB >= MinResidentGrowthMB
	}, func(f *Facts, v float64) string { return f.Memory.Split.Growth }, splitNext},
	{"memory.cgroup_limit_pct", func(f *Facts) (float64, bool) {
		sp := f.Memory.Split
		if sp == nil {
			return 0, false
		}
		return sp.LimitPct, sp.LimitMB > 0
	}, func(f *Facts, v float64) string { return f.Memory.Split.Limit }, splitNext},
	{"locks.wait_pct", func(f *Facts) (float64, bool) { return f.Locks.WaitPct, f.Locks.Seen },
		func(f *Facts, v float64) string {
			s := fmt.Sprintf("threads wait on locks %.0f%% of their time (%d waits, %.0f ms)", v, f.Locks.Contentions, f.Locks.WaitMs)
			if f.Locks.TopLock != "" {
				s += "; top: " + f.Locks.TopLock
			}
			return s
		}, lockNext},
	{"threadpool.queue_length", func(f *Facts) (float64, bool) { return f.ThreadPool.QueueMax, f.ThreadPool.Seen },
		func(f *Facts, v float64) string {
			return fmt.Sprintf("thread-pool queue reached %.0f work items (%.0f → %.0f threads): starvation",
				v, f.ThreadPool.ThreadsFirst, f.ThreadPool.ThreadsMax)
		}, tpNext},
	{"threadpool.thread_growth", func(f *Facts) (float64, bool) {
		return f.ThreadPool.ThreadsMax - f.ThreadPool.ThreadsFirst, f.ThreadPool.Seen
	}, func(f *Facts, v float64) string {
		return fmt.Sprintf("thread pool grew by %.0f threads (%.0f → %.0f): work items block", v, f.ThreadPool.ThreadsFirst, f.ThreadPool.ThreadsMax)
	}, tpNext},
	{"exceptions.per_sec", func(f *Facts) (float64, bool) { return f.Exceptions.PerSec, f.Exceptions.Seen },
		func(f *Facts, v float64) string {
			s := fmt.Sprintf("%.0f exceptions/s (%.0f thrown)", v, f.Exceptions.Count)
			if f.Exceptions.TopType != "" {
				s += "; top: " + f.Exceptions.TopType
			}
			return s
		}, func(f *Facts) string { return f.cmd("exceptions", "--duration 30s") }},
	{"cpu.demand_pct", func(f *Facts) (float64, bool) { return f.CPU.Pct, f.CPU.Seen && f.CPU.Source != "samples" },
		func(f *Facts, v float64) string {
			s := fmt.Sprintf("process wants %.0f%% of %d cores", v, f.CPU.Cores)
			if len(f.CPU.TopMethods) > 0 {
				s += fmt.Sprintf("; top: %s %.0f%%", f.CPU.TopMethods[0].Name, f.CPU.TopMethods[0].Pct)
			}
			return s
		}, func(f *Facts) string { return f.cmd("profile", "--duration 30s") }},
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
		out = append(out, Finding{Area: t.Area, Severity: sev, Title: r.title(f, v), Evidence: Evidence(f, t.Area),
			Next: r.next(f), Rule: r.key, Score: v / lim})
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
		return fmt.Sprintf("GC calm: %d GCs, %.1f%% paused, longest %.0f ms", f.GC.Count, f.GC.PausePct, f.GC.MaxPauseMs), true
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
		return "memory steady: " + strings.Join(parts, "; "), true
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
		return m
	case AreaMemory:
		m := &f.Memory
		e := map[string]any{"gcs_with_heap_stats": m.GCs, "first_old_mb": r(m.FirstOldMB), "last_old_mb": r(m.LastOldMB),
			"span_sec": r(m.SpanSec), "old_growth_mb_per_min": r(m.OldGrowthMBMin), "gen2_mb": r(m.Gen2MB), "loh_mb": r(m.LOHMB),
			"max_pinned_objects": m.MaxPinned}
		if m.HasFragmentation {
			e["gen2_fragmentation_pct"] = r(m.Gen2FragPct)
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
	return e
}
