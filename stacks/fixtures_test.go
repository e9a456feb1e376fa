package stacks

import (
	"slices"
	"testing"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/nettrace"
)

// Tests on the fixtures (testdata/traces), checked against what the
// workload measured about itself.

// TestCPUFixture: the cpu workload runs HotA and HotB in a known work
// ratio on one thread and times both; the profile finds them in about that
// ratio.
func TestCPUFixture(t *testing.T) {
	w := tracetest.Workload(t, "cpu.nettrace")
	p := build(t, tracetest.Path(t, "cpu.nettrace"), Options{})
	if p.Total != 822 || p.Managed != 759 || p.External != 63 || p.Unresolved != 0 || p.Truncated != 0 ||
		len(p.Threads) != 1 || p.Threads[0].ID != uint64(w.Pid) || p.PeriodNanos != 1_000_000 {
		t.Fatalf("samples %d managed %d external %d unresolved %d truncated %d, threads %+v",
			p.Total, p.Managed, p.External, p.Unresolved, p.Truncated, p.Threads)
	}
	incl, leaf := frameCounts(p)
	if leaf[NativeFrame] != p.External {
		t.Errorf("%d native leaves, %d external samples", leaf[NativeFrame], p.External)
	}
	var nanos [2]int64
	for i := range p.Samples {
		s := &p.Samples[i]
		for _, f := range s.Stack {
			switch p.Frames[f].Name {
			case "Workload.Cpu.HotA(int32)":
				nanos[0] += s.Nanos
			case "Workload.Cpu.HotB(int32)":
				nanos[1] += s.Nanos
			}
		}
	}
	// 482 and 142 samples: the ratio carries ~9 % of sampling error (one
	// standard deviation, from HotB's count), so allow 20 %. The measured
	// ratio is the workload's own stopwatch (3.09).
	want := w.Float("measuredRatio")
	a, b := incl["Workload.Cpu.HotA(int32)"], incl["Workload.Cpu.HotB(int32)"]
	if a != 482 || b != 142 {
		t.Errorf("HotA %d samples, HotB %d", a, b)
	}
	for _, r := range []float64{float64(a) / float64(b), float64(nanos[0]) / float64(nanos[1])} {
		if r < want*0.8 || r > want*1.2 {
			t.Errorf("HotA/HotB = %.2f, the workload measured %.2f", r, want)
		}
	}
	// The time credited to the two covers most of what the workload timed
	// (the sampler's own stops are credited to whatever ran before them).
	if got, meas := float64(nanos[0]+nanos[1])/1e6, w.Float("hotAMs")+w.Float("hotBMs"); got < meas*0.8 || got > meas {
		t.Errorf("HotA+HotB credited %.1f ms, the workload timed %.1f ms", got, meas)
	}
}

// TestRecursionFixture: the recursion workload spins 300 frames deep; the
// runtime's stack walk stops at 100 frames, so those samples end in a
// [truncated] root above 100 frames, nearly all of them Recurse.
func TestRecursionFixture(t *testing.T) {
	p := build(t, tracetest.Path(t, "recursion.nettrace"), Options{})
	if p.Total != 428 || p.Truncated != 317 || p.External != 91 {
		t.Fatalf("samples %d truncated %d external %d", p.Total, p.Truncated, p.External)
	}
	var truncated int64
	for i := range p.Samples {
		s := &p.Samples[i]
		root := p.Frames[s.Stack[len(s.Stack)-1]]
		if root.Name != TruncatedFrame {
			continue
		}
		truncated += s.Count
		recurse := 0
		for _, f := range s.Stack {
			if p.Frames[f].Name == "Workload.Recursion.Recurse(int32,float64)" {
				recurse++
			}
		}
		if len(s.Stack) != 101 || root.Kind != KindTruncated || recurse < 97 {
			t.Errorf("truncated sample: %d frames, %d of them Recurse", len(s.Stack), recurse)
		}
	}
	if truncated != p.Truncated {
		t.Errorf("%d samples under [truncated], %d counted", truncated, p.Truncated)
	}
}

// TestNativeFramesFixture: the contention workload's threads sleep inside
// the lock or wait for it, so most samples find them in native code: those
// end in a [native code] leaf, and ManagedOnly drops exactly them. Every
// contending thread the workload reported is sampled.
func TestNativeFramesFixture(t *testing.T) {
	w := tracetest.Workload(t, "contention.nettrace")
	var tids []uint64
	if err := w.Get("tids", &tids); err != nil {
		t.Fatal(err)
	}
	path := tracetest.Path(t, "contention.nettrace")
	p := build(t, path, Options{})
	if p.Total != 938 || p.External != 914 || p.Managed != 24 || len(p.Threads) != 5 {
		t.Fatalf("samples %d external %d managed %d threads %d", p.Total, p.External, p.Managed, len(p.Threads))
	}
	for _, tid := range append(tids, uint64(w.Pid)) {
		if !slices.ContainsFunc(p.Threads, func(th Thread) bool { return th.ID == tid && th.Samples > 100 }) {
			t.Errorf("thread %d not sampled: %+v", tid, p.Threads)
		}
	}
	for i := range p.Samples {
		s := &p.Samples[i]
		if native := p.Frames[s.Stack[0]].Name == NativeFrame; native != (s.Type == clrevents.SampleExternal) {
			t.Fatalf("sample type %v with leaf %q", s.Type, p.Frames[s.Stack[0]].Name)
		}
	}
	m := build(t, path, Options{ManagedOnly: true})
	var kept int64
	for i := range m.Samples {
		kept += m.Samples[i].Count
	}
	if _, leaf := frameCounts(m); leaf[NativeFrame] != 0 || m.Dropped != 914 || kept != 24 {
		t.Errorf("managed-only: %d native leaves, %d dropped, %d kept", leaf[NativeFrame], m.Dropped, kept)
	}
}

// TestSymbolsAllocationFixture names the stacks of heap-alloc's sampled
// allocations (AllocationSampled, .NET 10) with the exported table: every
// leaf resolves, and the churn loop (Workload.Churn.Run, which allocates
// everything the workload allocates) is on nearly every stack.
func TestSymbolsAllocationFixture(t *testing.T) {
	r := tracetest.Open(t, "heap-alloc.nettrace", nettrace.NewReader)
	sym := NewSymbols(r.Header())
	var stacks [][]uint64
	if err := tracetest.ReadAll(t, r, func(ev *nettrace.Event) {
		sym.Event(ev)
		if clrevents.Is(ev.Meta, nettrace.Runtime, clrevents.IDAllocationSampled) {
			stacks = append(stacks, append([]uint64(nil), ev.Stack...))
		}
	}); err != nil {
		t.Fatal(err)
	}
	if len(stacks) != 637 || sym.Stats().DecodeErrors != 0 {
		t.Fatalf("%d allocation stacks, %d decode errors", len(stacks), sym.Stats().DecodeErrors)
	}
	const run = "Workload.Churn.Run(class Workload.Options,class System.Collections.Generic.Dictionary`2<class System.String,class System.Object>)"
	inRun, empty := 0, 0
	for _, st := range stacks {
		if len(st) == 0 {
			empty++
			continue
		}
		frames := sym.Frames(st)
		if len(frames) == 0 || frames[0][:2] == "0x" {
			t.Fatalf("unresolved leaf: %q", frames)
		}
		if slices.Contains(frames, run) {
			inRun++
		}
	}
	// The rest are the runtime's own allocations at start-up and while the
	// workload writes its report.
	if inRun != 616 || empty != 1 {
		t.Errorf("%d of %d stacks through Churn.Run, %d empty", inRun, len(stacks), empty)
	}
	var nilSym *Symbols
	if got := nilSym.Frames([]uint64{0x1234}); len(got) != 1 || got[0] != "0x1234" {
		t.Errorf("nil table: %v", got)
	}
}
