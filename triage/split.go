package triage

import (
	"github.com/clrspy/clrspy/memory"
)

// SplitFacts are a live process's memory split (package memory: its RSS
// by part, from /proc/PID/smaps) read over the window, and its memory
// cgroup's limit: what the GC's own statistics cannot see (native heap,
// stacks, mapped images).
type SplitFacts struct {
	Samples           int     `json:"samples"`
	SpanSec           float64 `json:"span_sec"`
	RSSFirstMB        float64 `json:"rss_first_mb"`
	RSSLastMB         float64 `json:"rss_last_mb"`
	GCHeapDeltaMB     float64 `json:"gc_heap_delta_mb"`
	NativeHeapDeltaMB float64 `json:"native_heap_delta_mb"`
	// GrowingKind is the part that grew most, past the steady band
	// (memory.Steady; "": none); GrowingDeltaMB and GrowingMBPerMin its
	// change and its least-squares slope.
	GrowingKind     string  `json:"growing_kind,omitempty"`
	GrowingDeltaMB  float64 `json:"growing_delta_mb"`
	GrowingMBPerMin float64 `json:"growing_mb_per_min"`
	// The cgroup's limit and usage at the end (LimitMB 0: no limit).
	LimitMB  float64 `json:"cgroup_limit_mb"`
	UsageMB  float64 `json:"cgroup_usage_mb"`
	LimitPct float64 `json:"cgroup_limit_pct"`
	// Growth and Limit are clrspy memory's judgement of the same samples
	// (memory.JudgeGrowth, memory.JudgeLimit): the findings' wording.
	Growth string `json:"growth"`
	Limit  string `json:"limit,omitempty"`
}

// SplitOf judges the splits ss (oldest first, two or more for a trend)
// and the cgroup's limit and usage at the end (limit 0: none) into
// facts; nil without a sample.
func SplitOf(ss []memory.Sample, limit, usage uint64) *SplitFacts {
	if len(ss) == 0 {
		return nil
	}
	mb := func(b float64) float64 { return b / (1 << 20) }
	first, last := &ss[0].Split, &ss[len(ss)-1].Split
	f := &SplitFacts{Samples: len(ss), SpanSec: float64(ss[len(ss)-1].AtNs-ss[0].AtNs) / 1e9,
		RSSFirstMB: mb(float64(first.Rss)), RSSLastMB: mb(float64(last.Rss)),
		GCHeapDeltaMB:     mb(float64(last.Bytes(memory.GCHeap)) - float64(first.Bytes(memory.GCHeap))),
		NativeHeapDeltaMB: mb(float64(last.Bytes(memory.NativeHeap)) - float64(first.Bytes(memory.NativeHeap)))}
	if len(ss) >= 2 {
		f.Growth = memory.JudgeGrowth(ss)
		if g, ok := memory.Top(ss); ok {
			f.GrowingKind, f.GrowingDeltaMB, f.GrowingMBPerMin = string(g.Kind), mb(float64(g.Delta)), mb(g.PerSec*60)
		}
	}
	if limit > 0 {
		f.LimitMB, f.UsageMB, f.LimitPct = mb(float64(limit)), mb(float64(usage)), memory.LimitPct(limit, usage)
		f.Limit = memory.JudgeLimit(ss, limit, usage)
	}
	return f
}

// splitNext is the next command of a memory finding from the split: with
// --native when what grows is malloc's (the native heap, or other
// anonymous memory: its blocks over the mmap threshold), so the next run
// names the stacks that allocate it.
func splitNext(f *Facts) string {
	if sp := f.Memory.Split; sp != nil && (sp.GrowingKind == string(memory.NativeHeap) || sp.GrowingKind == string(memory.Other)) {
		return f.cmd("memory", "--native --duration 60s")
	}
	return f.cmd("memory", "--duration 60s")
}
