//go:build compat

package gcpause

import (
	"bytes"
	"os"
	"slices"
	"testing"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/nettrace"
)

// Tests on the compatibility suite: third-party traces, with expected
// values from CATALOG.md, PerfView's baselines and the raw events.

// analyze runs a trace of the compatibility suite through an Analyzer;
// truncation is not an error.
func analyze(t testing.TB, name string, opts Options) (*Result, *nettrace.Reader) {
	t.Helper()
	res, r, _ := analyzeFile(t, tracetest.CompatPath(t, name), opts)
	return res, r
}

type counts struct {
	gen    [3]int
	typ    [3]int
	reason map[clrevents.GCReason]int
}

func countAll(gcs []*GC) counts {
	c := counts{reason: map[clrevents.GCReason]int{}}
	for _, g := range gcs {
		c.gen[g.Generation]++
		c.typ[g.Type]++
		c.reason[g.Reason]++
	}
	return c
}

// TestRealTraces checks GC counts by generation, type and reason against
// CATALOG.md (decoded from the GCStart payloads there), and the suspension
// counts by reason against its GCSuspendEEBegin tallies.
func TestRealTraces(t *testing.T) {
	type want struct {
		file      string
		started   int
		complete  int
		gen       [3]int
		typ       [3]int
		reasons   map[clrevents.GCReason]int
		suspByRsn map[clrevents.SuspendReason]int
	}
	all := func(n int) map[clrevents.GCReason]int { return map[clrevents.GCReason]int{clrevents.ReasonInduced: n} }
	cases := []want{
		{"perfview__eventpipe-dotnetcore3.0-win-x64-objver4.nettrace", 478, 478, [3]int{473, 5, 0}, [3]int{478, 0, 0},
			map[clrevents.GCReason]int{clrevents.ReasonAllocSmall: 478},
			map[clrevents.SuspendReason]int{0: 5475, 1: 478}},
		// Truncated: the last GC (2151) has no end, so 384 of 385 are complete.
		{"diagnostics__trace.nettrace", 385, 384, [3]int{325, 58, 2}, [3]int{263, 2, 120},
			map[clrevents.GCReason]int{clrevents.ReasonAllocSmall: 385},
			map[clrevents.SuspendReason]int{0: 675, 1: 382, 6: 4}},
		{"filtrace__alloc.nettrace", 7, 7, [3]int{1, 0, 6}, [3]int{7, 0, 0},
			map[clrevents.GCReason]int{clrevents.ReasonAllocSmall: 1, clrevents.ReasonInduced: 6},
			map[clrevents.SuspendReason]int{1: 7}},
		{"filtrace__contention.nettrace", 6, 6, [3]int{0, 0, 6}, [3]int{6, 0, 0}, all(6), map[clrevents.SuspendReason]int{0: 41, 1: 6}},
		{"filtrace__wait.nettrace", 6, 6, [3]int{0, 0, 6}, [3]int{6, 0, 0}, all(6), map[clrevents.SuspendReason]int{0: 309, 1: 6}},
		{"filtrace__threadpool.nettrace", 6, 6, [3]int{0, 0, 6}, [3]int{6, 0, 0}, all(6), map[clrevents.SuspendReason]int{0: 2819, 1: 6}},
		{"filtrace__exceptions.nettrace", 6, 6, [3]int{0, 0, 6}, [3]int{6, 0, 0}, all(6), map[clrevents.SuspendReason]int{0: 42, 1: 6}},
		{"filtrace__activity.nettrace", 6, 6, [3]int{0, 0, 6}, [3]int{6, 0, 0}, all(6), map[clrevents.SuspendReason]int{0: 292, 1: 6}},
		{"RememberCalendar__trace.nettrace", 1, 1, [3]int{0, 0, 1}, [3]int{1, 0, 0}, all(1), map[clrevents.SuspendReason]int{1: 1}},
		// Sample-profiler-only traces: no GC, every stop a SuspendOther.
		{"perfview__mixed_managed_external_samples.nettrace", 0, 0, [3]int{}, [3]int{}, map[clrevents.GCReason]int{}, map[clrevents.SuspendReason]int{0: 6331}},
		{"perfview__only_managed_samples.nettrace", 0, 0, [3]int{}, [3]int{}, map[clrevents.GCReason]int{}, map[clrevents.SuspendReason]int{0: 7423}},
		{"dotnetdiag__dotnet-5.0-SampleProfiler-single-thread.golden.nettrace", 0, 0, [3]int{}, [3]int{}, map[clrevents.GCReason]int{}, map[clrevents.SuspendReason]int{0: 5564}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			res, _ := analyze(t, c.file, Options{})
			if res.Started != c.started || res.Complete != c.complete || len(res.GCs) != c.started {
				t.Errorf("started %d complete %d rows %d, want %d %d %d", res.Started, res.Complete, len(res.GCs), c.started, c.complete, c.started)
			}
			got := countAll(res.GCs)
			if got.gen != c.gen || got.typ != c.typ {
				t.Errorf("by generation %v type %v, want %v %v", got.gen, got.typ, c.gen, c.typ)
			}
			if len(got.reason) != len(c.reasons) {
				t.Errorf("reasons %v, want %v", got.reason, c.reasons)
			}
			for r, n := range c.reasons {
				if got.reason[r] != n {
					t.Errorf("reason %v: %d, want %d", r, got.reason[r], n)
				}
			}
			if len(res.ByReason) != len(c.suspByRsn) {
				t.Errorf("suspension reasons %+v, want %v", res.ByReason, c.suspByRsn)
			}
			for r, n := range c.suspByRsn {
				if s := res.Reason(r); s.Count != n {
					t.Errorf("suspensions %v: %d, want %d", r, s.Count, n)
				}
			}
			if c.started == 0 && (res.All.Count != 0 || res.All.TotalNanos != 0 || len(res.Suspensions) != 0) {
				t.Errorf("sample-only trace: GC stats %+v, %d suspensions listed", res.All, len(res.Suspensions))
			}
			sum := 0
			for _, s := range res.ByGen {
				sum += s.Count
			}
			if sum != res.All.Count {
				t.Errorf("generations add up to %d, all %d", sum, res.All.Count)
			}
		})
	}
}

// TestObjver4FirstGC checks the first GC of the objver4 trace against the
// values PerfView's baseline prints for its first events (GC/Start at MSec
// 5455.9407 Count=1, HeapStats, PerHeapHistory gen0 SizeBefore 3,154,608,
// FreeObjSpaceBefore 768,160, survival 7%), and the suspension timing
// computed by hand from the raw events.
func TestObjver4FirstGC(t *testing.T) {
	res, _ := analyze(t, "perfview__eventpipe-dotnetcore3.0-win-x64-objver4.nettrace", Options{})
	g := res.GCs[0]
	if g.Number != 1 || g.Generation != 0 || g.Type != clrevents.GCNonConcurrent || !g.Complete || g.Pauses != 1 {
		t.Fatalf("first GC %+v", g)
	}
	if g.HeapStats.GenerationSize[1] != 0x331C8 || g.HeapStats.TotalPromoted() != 0x2AD90 || g.HeapStats.PinnedObjectCount != 2 {
		t.Errorf("heap stats %+v", g.HeapStats)
	}
	if g.Gens[0].SizeBefore != 3154608 || g.Gens[0].ObjSpaceBefore != 3154608-768160 || g.Heaps != 1 {
		t.Errorf("gen0 %+v heaps %d", g.Gens[0], g.Heaps)
	}
	if s := g.SurvivalPercent(0); s < 7 || s >= 8 {
		t.Errorf("gen0 survival %.2f%%, PerfView says 7", s)
	}
	if g.SurvivalPercent(1) != -1 {
		t.Errorf("gen1 survival in a gen0 GC = %v, want unknown", g.SurvivalPercent(1))
	}
	// GCStart (GC work) 5455.9407 → GCEnd 5475.9763 ms in the baseline.
	if d := float64(g.DurationNanos) / 1e6; d < 20.03 || d > 20.04 {
		t.Errorf("GC duration %.4f ms, want 20.0356", d)
	}
	if g.PauseNanos <= g.DurationNanos || g.SuspendNanos <= 0 || g.SuspendNanos >= g.PauseNanos {
		t.Errorf("pause %d suspend %d duration %d", g.PauseNanos, g.SuspendNanos, g.DurationNanos)
	}
	// The runtime's definition: SuspendEEBegin (5455.2013) → GCEnd
	// (5475.9763), one thread; PerfView's runs on to RestartEEEnd (20.8652).
	if d := float64(g.PauseRuntimeNanos) / 1e6; d < 20.7749 || d > 20.7751 || g.PauseNanos != 20865215 {
		t.Errorf("runtime pause %.4f ms, want 20.7750; pause %d", d, g.PauseNanos)
	}
	if got := g.GenerationName(); got != "0N" {
		t.Errorf("gen name %q", got)
	}
	if res.UnmatchedRestarts != 49 {
		// CATALOG: RestartEE outnumbers SuspendEE by 49.
		t.Errorf("unmatched restarts %d, want 49", res.UnmatchedRestarts)
	}
}

// TestDiagnosticsBGC checks the background GC accounting on the truncated
// trace: GC 1794 is a BGC whose pause is its initial stop plus two
// SuspendForGCPrep stops (values computed by hand from the raw events:
// 1726.2651→1728.0459 suspend, 4055.2142→4066.9308 and 5316.1561→5378.0979
// RestartEEEnd); GC 1795 is the ephemeral GC at its start and pauses from
// its own GCStart (1728.9872) to the RestartEEEnd at 1738.2850.
func TestDiagnosticsBGC(t *testing.T) {
	res, _ := analyze(t, "diagnostics__trace.nettrace", Options{})
	byNum := map[uint32]*GC{}
	for _, g := range res.GCs {
		byNum[g.Number] = g
	}
	near := func(name string, got int64, wantMS float64) {
		t.Helper()
		if d := float64(got)/1e6 - wantMS; d > 0.0002 || d < -0.0002 {
			t.Errorf("%s = %.4f ms, want %.4f", name, float64(got)/1e6, wantMS)
		}
	}
	b := byNum[1794]
	if b == nil || b.Type != clrevents.GCBackground || !b.Complete || b.Pauses != 3 {
		t.Fatalf("BGC 1794: %+v", b)
	}
	near("BGC pause", b.PauseNanos, (1728.0459-1726.2651)+(4066.9308-4055.2142)+(5378.0979-5316.1561))
	near("BGC pause start", b.PauseStartNanos, 1726.2651)
	e := byNum[1795]
	if e == nil || e.Type != clrevents.GCNonConcurrent || !e.Complete || e.SuspendNanos != 0 {
		t.Fatalf("ephemeral GC 1795: %+v", e)
	}
	near("ephemeral pause", e.PauseNanos, 1738.2850-1728.9872)
	// GC 1855 is a foreground GC whose suspension overlapped the BGC's
	// last stop (PerfView drops it; here it is a row of its own).
	f := byNum[1855]
	if f == nil || f.Type != clrevents.GCForeground || !f.Complete {
		t.Fatalf("foreground GC 1855: %+v", f)
	}
	near("foreground pause", f.PauseNanos, 5387.9156-5323.2507)
	// The first GC began before the session: no suspension seen.
	if g := res.GCs[0]; g.Number != 1767 || !g.NoSuspension || !g.Complete {
		t.Errorf("first GC %+v", g)
	}
	if last := res.GCs[len(res.GCs)-1]; last.Number != 2151 || last.Complete {
		t.Errorf("last GC %d complete=%v, want 2151 cut by the truncation", last.Number, last.Complete)
	}
	if res.ByType[clrevents.GCBackground] != 2 || res.ByType[clrevents.GCForeground] != 120 || res.ByType[clrevents.GCNonConcurrent] != 262 {
		t.Errorf("complete by type %v", res.ByType)
	}
}

// BenchmarkObjver4 measures analysis throughput on the 478-GC trace: the
// events are decoded once, then fed to a fresh Analyzer per iteration, so
// only the analysis is timed.
func BenchmarkObjver4(b *testing.B) {
	f, err := os.Open(tracetest.CompatPath(b, "perfview__eventpipe-dotnetcore3.0-win-x64-objver4.nettrace"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	r, err := nettrace.NewReader(f)
	if err != nil {
		b.Fatal(err)
	}
	var evs []nettrace.Event
	for {
		ev, err := r.Next()
		if err != nil {
			break
		}
		c := *ev
		c.Payload = append([]byte(nil), ev.Payload...)
		c.Stack = nil
		evs = append(evs, c)
	}
	hdr := *r.Header()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		a := New(&hdr, Options{})
		for j := range evs {
			a.Event(&evs[j])
		}
		if res := a.Result(); res.Complete != 478 {
			b.Fatalf("%d GCs", res.Complete)
		}
	}
	b.ReportMetric(float64(len(evs))*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkObjver4WithReader is the end-to-end figure: reading and
// analysing the file.
func BenchmarkObjver4WithReader(b *testing.B) {
	data, err := os.ReadFile(tracetest.CompatPath(b, "perfview__eventpipe-dotnetcore3.0-win-x64-objver4.nettrace"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	var n int
	for i := 0; i < b.N; i++ {
		r, err := nettrace.NewReader(bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		a := New(r.Header(), Options{})
		n = 0
		for {
			ev, err := r.Next()
			if err != nil {
				break
			}
			a.Event(ev)
			n++
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// TestDiagnosticsOverlapCountedOnce: foreground GC 1855 (gen0) suspended at
// 5323.2507 ms, while background GC 1794's (gen2) last GCPrep stop,
// 5316.1561 → 5378.0979 on another thread, was on; its pause runs to its
// RestartEEEnd at 5387.9156. Each keeps its pause (PerfView's rule), but
// the 5378.0979 − 5323.2507 = 54.8472 ms stopped by both count once in the
// totals and in % paused. It is the trace's only overlap, and it is between
// generations: each generation's row counts its own stops once and equals
// its sum, and the rows add up to all's total plus the overlap.
func TestDiagnosticsOverlapCountedOnce(t *testing.T) {
	res, _ := analyze(t, "diagnostics__trace.nettrace", Options{})
	near := func(name string, got int64, wantMS float64) {
		t.Helper()
		if d := float64(got)/1e6 - wantMS; d > 0.0002 || d < -0.0002 {
			t.Errorf("%s = %.4f ms, want %.4f", name, float64(got)/1e6, wantMS)
		}
	}
	const overlap = 5378.0979 - 5323.2507
	var sum int64
	for _, g := range res.GCs {
		if g.Complete {
			sum += g.PauseNanos
		}
	}
	if res.All.SumNanos != sum {
		t.Errorf("sum of pauses %d, rows add up to %d", res.All.SumNanos, sum)
	}
	near("time counted twice by the sum", res.All.SumNanos-res.All.TotalNanos, overlap)
	near("stopped time", res.All.TotalNanos, 5917.7925-overlap)
	if p, want := res.All.PausePercent, float64(res.All.TotalNanos)*100/float64(res.SessionNanos); p != want || p < 23.428 || p > 23.429 {
		t.Errorf("%% paused %.4f, want %.4f (23.43, not the sum's 23.65)", p, want)
	}
	var gens int64
	for i, s := range res.ByGen {
		if s.TotalNanos != s.SumNanos {
			t.Errorf("gen%d: total %d, sum %d: no overlap within a generation", i, s.TotalNanos, s.SumNanos)
		}
		gens += s.TotalNanos
	}
	near("generations' totals beyond all's", gens-res.All.TotalNanos, overlap)
}

// TestDiagnosticsStartUnseen: GC 1767's GCStart (0.8454 ms) is the trace's
// first GC event, with no SuspendEEBegin before it: its 6.8296 ms (to its
// RestartEEEnd at 7.6750) are a lower bound. It counts in the totals (that
// stopped time is inside the session) but not in max, mean, percentiles or
// the histogram.
func TestDiagnosticsStartUnseen(t *testing.T) {
	res, _ := analyze(t, "diagnostics__trace.nettrace", Options{})
	var seen []int64
	var seenSum, all int64
	for _, g := range res.GCs {
		if !g.Complete || g.Generation != 0 {
			continue
		}
		all += g.PauseNanos
		if g.Number == 1767 {
			if g.StartSeen || g.PauseNanos != 6829600 {
				t.Errorf("GC 1767 start seen %v, pause %d", g.StartSeen, g.PauseNanos)
			}
			continue
		}
		if !g.StartSeen {
			t.Errorf("GC %d: start not seen", g.Number)
		}
		seen = append(seen, g.PauseNanos)
		seenSum += g.PauseNanos
	}
	s := res.ByGen[0]
	if res.All.StartUnseen != 1 || s.StartUnseen != 1 || s.Count != 324 || len(seen) != 323 {
		t.Fatalf("unseen %d/%d, gen0 count %d, %d seen", res.All.StartUnseen, s.StartUnseen, s.Count, len(seen))
	}
	if s.SumNanos != all || s.MeanNanos != seenSum/323 {
		t.Errorf("gen0 sum %d (want %d with GC 1767), mean %d (want %d without)", s.SumNanos, all, s.MeanNanos, seenSum/323)
	}
	slices.Sort(seen)
	if s.P50 != percentile(seen, 50) || s.P90 != percentile(seen, 90) || s.P99 != percentile(seen, 99) {
		t.Errorf("gen0 p50/p90/p99 %d %d %d, want %d %d %d", s.P50, s.P90, s.P99, percentile(seen, 50), percentile(seen, 90), percentile(seen, 99))
	}
	with := append(slices.Clone(seen), 6829600)
	slices.Sort(with)
	if percentile(with, 50) == s.P50 {
		t.Errorf("p50 does not tell GC 1767 in or out: the check proves nothing")
	}
	if n := int(res.All.Histogram.Count); n != res.All.Count-1 {
		t.Errorf("histogram holds %d GCs, want %d", res.All.Histogram.Count, res.All.Count-1)
	}
}
