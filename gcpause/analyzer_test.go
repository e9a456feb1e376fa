package gcpause

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/internal/tracegen"
	"github.com/clrspy/clrspy/nettrace"
)

// feed describes a synthetic stream (package tracegen; 1 tick = 1 ns,
// times in ms) for unit tests of the state machine's edges, and reads it
// back through the analyzer when a test asks for the result; real
// behaviour is proven on the real traces.
type feed struct {
	t     *testing.T
	g     *tracegen.Trace
	a     *Analyzer
	fed   int // events read through a so far
	gcs   []*GC
	susps []*Suspension
}

const tGC, tSampler, tBGC, tOther = 100, 200, 300, 400

func newFeed(t *testing.T) *feed {
	f := &feed{t: t, g: tracegen.NewOptions(tracegen.Options{Start: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)})}
	f.a = New(f.g.Header(), Options{
		OnGC:         func(g *GC) { f.gcs = append(f.gcs, g) },
		OnSuspension: func(s *Suspension) { f.susps = append(f.susps, s) },
	})
	return f
}

// result writes the stream, reads it back, gives the analyzer the events
// it has not had yet (a test may ask mid-stream, then describe more) and
// returns the analyzer's result.
func (f *feed) result() *Result {
	f.t.Helper()
	n := 0
	f.g.Run(f.t, func(ev *nettrace.Event) {
		if n >= f.fed {
			f.a.Event(ev)
		}
		n++
	})
	f.fed = n
	return f.a.Result()
}

func msT(v float64) int64 { return int64(v * 1e6) }

// on is thread th at at ms.
func (f *feed) on(at float64, th uint64) *tracegen.Thread {
	return f.g.Thread(th).At(time.Duration(msT(at)))
}

// ev writes runtime event id at version with payload as given, lost
// events of th before it.
func (f *feed) ev(id, version uint32, at float64, th uint64, payload []byte, lost uint32) {
	f.on(at, th).Lost(lost).Runtime(id, version, payload)
}

func (f *feed) suspend(at float64, th uint64, reason clrevents.SuspendReason) {
	f.on(at, th).SuspendEE(reason, 0)
}
func (f *feed) suspended(at float64, th uint64) { f.on(at, th).SuspendEEEnd() }
func (f *feed) restart(at float64, th uint64)   { f.on(at, th).Restart() }
func (f *feed) start(at float64, th uint64, n, gen uint32, typ clrevents.GCType, reason clrevents.GCReason) {
	f.on(at, th).GCStart(n, gen, reason, typ)
}
func (f *feed) end(at float64, th uint64, n, gen uint32) { f.on(at, th).GCEnd(n, gen) }
func (f *feed) heapStats(at float64, th uint64) {
	f.on(at, th).HeapStats(clrevents.GCHeapStats{})
}
func (f *feed) perHeap(at float64, th uint64) { f.on(at, th).PerHeapHistory() }

// blocking runs one whole blocking GC on thread th.
func (f *feed) blocking(at float64, th uint64, n, gen uint32) {
	f.suspend(at, th, clrevents.SuspendForGC)
	f.suspended(at+0.5, th)
	f.start(at+0.6, th, n, gen, clrevents.GCNonConcurrent, clrevents.ReasonAllocSmall)
	f.end(at+2, th, n, gen)
	f.heapStats(at+2.1, th)
	f.restart(at+3, th)
}

func near(t *testing.T, what string, gotNanos int64, wantMS float64) {
	t.Helper()
	if d := float64(gotNanos)/1e6 - wantMS; d > 1e-6 || d < -1e-6 {
		t.Errorf("%s = %.6f ms, want %.6f", what, float64(gotNanos)/1e6, wantMS)
	}
}

func TestBlockingGC(t *testing.T) {
	f := newFeed(t)
	f.blocking(10, tGC, 1, 0)
	f.start(10.6, tGC, 1, 0, clrevents.GCNonConcurrent, 0) // duplicate GCStart after the end: ignored
	res := f.result()
	if len(f.gcs) != 1 || res.Started != 1 || res.Complete != 1 {
		t.Fatalf("callbacks %d started %d complete %d", len(f.gcs), res.Started, res.Complete)
	}
	g := f.gcs[0]
	near(t, "pause", g.PauseNanos, 3)
	near(t, "suspend", g.SuspendNanos, 0.5)
	near(t, "duration", g.DurationNanos, 1.4)
	near(t, "pause start", g.PauseStartNanos, 10)
	if !g.PauseStartUTC.Equal(time.Date(2026, 1, 1, 0, 0, 0, 10e6, time.UTC)) {
		t.Errorf("pause start UTC %v", g.PauseStartUTC)
	}
	if r := res.Reason(clrevents.SuspendForGC); r.Count != 1 || r.TotalNanos != msT(3) {
		t.Errorf("GC suspensions %+v", r)
	}
	if len(res.Suspensions) != 0 {
		t.Errorf("a GC's suspension listed as a runtime suspension: %+v", res.Suspensions)
	}
}

func TestMissingSuspendEEEnd(t *testing.T) {
	f := newFeed(t)
	f.suspend(10, tGC, clrevents.SuspendForGC)
	f.start(11, tGC, 1, 1, clrevents.GCNonConcurrent, clrevents.ReasonInduced)
	f.heapStats(12, tGC)
	f.restart(13, tGC)
	f.result()
	if len(f.gcs) != 1 || !f.gcs[0].Complete {
		t.Fatalf("gcs %+v", f.gcs)
	}
	g := f.gcs[0]
	if !g.MissingSuspendEnd || !g.Induced || g.GenerationName() != "1NI" {
		t.Errorf("flags %+v name %s", g, g.GenerationName())
	}
	near(t, "suspend (to GCStart)", g.SuspendNanos, 1)
	near(t, "pause", g.PauseNanos, 3)
	if g.DurationNanos != -1 {
		t.Errorf("duration %d without GCEnd, want -1", g.DurationNanos)
	}
}

func TestRestartWithoutSuspend(t *testing.T) {
	f := newFeed(t)
	f.restart(1, tOther) // suspension began before the session
	f.suspend(10, tGC, clrevents.SuspendForGC)
	f.suspended(10.5, tGC)
	f.start(11, tGC, 7, 0, clrevents.GCNonConcurrent, 0)
	f.restart(11.5, tOther) // another thread's stray restart must not end the GC
	f.heapStats(12, tGC)
	f.restart(14, tGC)
	res := f.result()
	if res.UnmatchedRestarts != 2 {
		t.Errorf("unmatched restarts %d, want 2", res.UnmatchedRestarts)
	}
	if len(f.gcs) != 1 || !f.gcs[0].Complete {
		t.Fatalf("gcs %+v", f.gcs)
	}
	near(t, "pause", f.gcs[0].PauseNanos, 4)
}

// TestBGCSpanningForegroundGCs: a background GC with the ephemeral GC at
// its start, three foreground GCs (each with its own suspension) and two
// SuspendForGCPrep stops; the BGC's pause is its own stops only.
func TestBGCSpanningForegroundGCs(t *testing.T) {
	f := newFeed(t)
	f.suspend(10, tGC, clrevents.SuspendForGC)
	f.suspended(11, tGC)
	f.start(12, tGC, 10, 2, clrevents.GCBackground, clrevents.ReasonAllocSmall)
	f.start(13, tGC, 11, 1, clrevents.GCNonConcurrent, clrevents.ReasonAllocSmall) // ephemeral at BGC start
	f.end(15, tGC, 11, 1)
	f.heapStats(15.5, tGC)
	f.restart(16, tGC)
	for i := 0; i < 3; i++ {
		at := 100 + float64(i)*100
		f.suspend(at, tOther, clrevents.SuspendForGC)
		f.suspended(at+1, tOther)
		f.start(at+1.5, tOther, uint32(12+i), 0, clrevents.GCForeground, clrevents.ReasonAllocSmall)
		f.end(at+4, tOther, uint32(12+i), 0)
		f.heapStats(at+4.5, tOther)
		f.restart(at+5, tOther)
		if i == 1 {
			f.suspend(260, tBGC, clrevents.SuspendForGCPrep)
			f.suspended(260.5, tBGC)
			f.restart(262, tBGC)
		}
	}
	f.suspend(500, tBGC, clrevents.SuspendForGCPrep)
	f.suspended(500.25, tBGC)
	f.restart(507, tBGC)
	f.end(510, tBGC, 10, 2)
	f.heapStats(511, tBGC)

	res := f.result()
	if res.Started != 5 || res.Complete != 5 || len(f.gcs) != 5 {
		t.Fatalf("started %d complete %d emitted %d", res.Started, res.Complete, len(f.gcs))
	}
	byNum := map[uint32]*GC{}
	for _, g := range f.gcs {
		byNum[g.Number] = g
	}
	b := byNum[10]
	if b.Type != clrevents.GCBackground || b.Pauses != 3 {
		t.Fatalf("BGC %+v", b)
	}
	// Initial suspension (1 ms, as PerfView: the ephemeral GC owns the rest
	// of that stop) + 2 ms + 7 ms GCPrep stops.
	near(t, "BGC pause", b.PauseNanos, 1+2+7)
	near(t, "BGC suspend", b.SuspendNanos, 1+0.5+0.25)
	near(t, "BGC duration", b.DurationNanos, 510-12)
	e := byNum[11]
	near(t, "ephemeral pause (from its GCStart)", e.PauseNanos, 3)
	near(t, "ephemeral suspend", e.SuspendNanos, 0)
	for n := uint32(12); n <= 14; n++ {
		g := byNum[n]
		if g.Type != clrevents.GCForeground || !g.Complete {
			t.Errorf("foreground %d: %+v", n, g)
		}
		near(t, "foreground pause", g.PauseNanos, 5)
	}
	if res.ByType[clrevents.GCForeground] != 3 || res.ByGen[0].Count != 3 || res.ByGen[1].Count != 1 || res.ByGen[2].Count != 1 {
		t.Errorf("by type %v by gen %+v", res.ByType, res.ByGen)
	}
	near(t, "total pause", res.All.TotalNanos, 10+3+15)
	if r := res.Reason(clrevents.SuspendForGCPrep); r.Count != 2 || r.TotalNanos != msT(9) {
		t.Errorf("GCPrep suspensions %+v", r)
	}
}

func TestLostEventsMidGC(t *testing.T) {
	f := newFeed(t)
	f.suspend(10, tGC, clrevents.SuspendForGC)
	f.suspended(10.5, tGC)
	f.start(11, tGC, 1, 0, clrevents.GCNonConcurrent, 0)
	// Lost: GCEnd, HeapStats, RestartEE of GC 1 and the next SuspendEEBegin
	// of another thread.
	// (A reader sees a gap in a thread's sequence numbers only after its
	// first event: tOther was seen before, in an event the analyzer skips.)
	f.on(1, tOther).ThreadCreated(0x7f0000001000, 2, tOther)
	f.ev(clrevents.IDGCSuspendEEEnd, 1, 50, tOther, []byte{0, 0}, 5)
	f.blocking(100, tGC, 2, 1)
	res := f.result()
	if res.LostEvents != 5 || res.Started != 2 || res.Complete != 1 || res.Incomplete != 1 {
		t.Fatalf("lost %d started %d complete %d incomplete %d", res.LostEvents, res.Started, res.Complete, res.Incomplete)
	}
	if len(f.gcs) != 2 || f.gcs[0].Complete || !f.gcs[0].LostEvents || !f.gcs[1].Complete {
		t.Fatalf("emitted %+v", f.gcs)
	}
	near(t, "second GC pause", f.gcs[1].PauseNanos, 3)
	// The given-up GC's suspension is closed incomplete, not counted as a
	// GC pause.
	if r := res.Reason(clrevents.SuspendForGC); r.Count != 2 || r.Incomplete != 1 {
		t.Errorf("GC suspensions %+v", r)
	}
	near(t, "total pause", res.All.TotalNanos, 3)
}

// TestSamplerDoesNotDisturbGC: the sampler's suspension begins first and
// waits while the GC suspends (as in the real diagnostics trace); the GC's
// numbers must come from its own thread's events only.
func TestSamplerDoesNotDisturbGC(t *testing.T) {
	f := newFeed(t)
	for i := 0; i < 5; i++ { // ordinary ticks
		at := float64(i)
		f.suspend(at, tSampler, clrevents.SuspendOther)
		f.suspended(at+0.1, tSampler)
		f.restart(at+0.2, tSampler)
	}
	f.suspend(10, tGC, clrevents.SuspendForGC)
	f.suspend(10.1, tSampler, clrevents.SuspendOther) // waits for the GC
	f.suspended(10.4, tGC)
	f.start(10.5, tGC, 3, 0, clrevents.GCNonConcurrent, 0)
	f.heapStats(12, tGC)
	f.restart(13, tGC)
	f.suspended(13.1, tSampler)
	f.restart(13.3, tSampler)
	res := f.result()
	if len(f.gcs) != 1 || !f.gcs[0].Complete {
		t.Fatalf("gcs %+v", f.gcs)
	}
	near(t, "pause", f.gcs[0].PauseNanos, 3)
	near(t, "suspend", f.gcs[0].SuspendNanos, 0.4)
	o := res.Reason(clrevents.SuspendOther)
	if o.Count != 6 || len(f.susps) != 0 || len(res.Suspensions) != 0 {
		t.Errorf("sampler: %+v, %d logged", o, len(f.susps))
	}
	near(t, "sampler max", o.MaxNanos, 3.2)
	near(t, "sampler total", o.TotalNanos, 5*0.2+3.2)
}

func TestNonGCSuspension(t *testing.T) {
	f := newFeed(t)
	f.suspend(5, tOther, clrevents.SuspendForDebugger)
	f.suspended(6, tOther)
	f.restart(25, tOther)
	f.suspend(30, tOther, clrevents.SuspendForShutdown) // never restarted
	res := f.result()
	if res.Started != 0 || res.All.Count != 0 {
		t.Errorf("counted as GC: %+v", res.All)
	}
	if len(f.susps) != 1 || f.susps[0].Reason != clrevents.SuspendForDebugger {
		t.Fatalf("callbacks %+v", f.susps)
	}
	near(t, "debugger pause", f.susps[0].PauseNanos, 20)
	near(t, "debugger suspend", f.susps[0].SuspendNanos, 1)
	if r := res.Reason(clrevents.SuspendForShutdown); r.Count != 1 || r.Incomplete != 1 {
		t.Errorf("open shutdown suspension %+v", r)
	}
}

func TestPercentilesAndHistogram(t *testing.T) {
	v := []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	if percentile(v, 50) != 5 || percentile(v, 90) != 9 || percentile(v, 99) != 10 || percentile(v, 99.9) != 10 || percentile(nil, 50) != 0 {
		t.Errorf("nearest-rank percentiles wrong")
	}
	f := newFeed(t)
	for i := 0; i < 4; i++ {
		f.blocking(float64(i)*10, tGC, uint32(i+1), 0) // 3 ms pauses
	}
	res := f.result()
	h := &res.All.Histogram
	var got uint64
	for i, n := range h.Counts {
		if lo, hi := h.Bucket(i); lo == 2e6 && hi == 5e6 {
			got = n
		}
	}
	if lo, hi := h.Bucket(0); got != 4 || lo != 0 || hi != 100_000 || len(h.Counts) != len(h.UpperNanos)+1 {
		t.Errorf("histogram %+v", *h)
	}
	if res.All.P50 != msT(3) || res.All.MeanNanos != msT(3) || len(res.Longest) != 4 {
		t.Errorf("stats %+v longest %d", res.All, len(res.Longest))
	}
	// 4 × 3 ms over a 33 ms session.
	if p := res.All.PausePercent; p < 36.36 || p > 36.37 {
		t.Errorf("pause percent %.3f", p)
	}
}

func TestKeepGCsBoundsRows(t *testing.T) {
	f := newFeed(t)
	f.a.opts.MaxGCs = 10
	for i := 0; i < 100; i++ {
		f.blocking(float64(i)*10, tGC, uint32(i+1), 0)
	}
	res := f.result()
	if len(res.GCs) != 10 || res.GCs[9].Number != 100 || res.All.Count != 100 {
		t.Errorf("rows %d last %d count %d", len(res.GCs), res.GCs[len(res.GCs)-1].Number, res.All.Count)
	}
}

// TestBGCWithinOneStop: the first GC of a .NET 10 process is reported as
// Background but runs whole inside its suspension (heap stats before the
// RestartEE); its pause is that whole stop (seen live in longgen2).
func TestBGCWithinOneStop(t *testing.T) {
	f := newFeed(t)
	f.suspend(391.3771, tGC, clrevents.SuspendForGC)
	f.suspended(391.3922, tGC)
	f.start(391.5188, tGC, 1, 2, clrevents.GCBackground, clrevents.ReasonAllocSmall)
	f.end(430.6297, tGC, 1, 2)
	f.heapStats(430.6310, tGC)
	f.result()
	if len(f.gcs) != 0 {
		t.Fatalf("emitted before its stop ended: %+v", f.gcs[0])
	}
	f.restart(430.7014, tGC)
	f.result()
	if len(f.gcs) != 1 || !f.gcs[0].Complete {
		t.Fatalf("gcs %+v", f.gcs)
	}
	near(t, "pause", f.gcs[0].PauseNanos, 430.7014-391.3771)
	// The runtime fell back to a blocking GC: SuspendEEBegin → GCEnd.
	near(t, "runtime pause", f.gcs[0].PauseRuntimeNanos, 430.6297-391.3771)
}

// FuzzAnalyzer feeds arbitrary event sequences (ids, threads, times and
// payloads from the fuzz input) and checks the analyzer never panics and
// its result stays consistent.
func FuzzAnalyzer(f *testing.F) {
	f.Add([]byte{9, 1, 10, 1, 0, 0, 0, 8, 1, 11, 1, 7, 1, 20, 3, 1, 21, 4, 1, 22})
	f.Add([]byte{9, 2, 1, 6, 0, 0, 0, 1, 2, 5, 1, 0, 0, 0, 3, 2, 9, 4, 3, 12})
	f.Fuzz(func(t *testing.T, b []byte) {
		fd := newFeed(t)
		ids := []uint32{1, 2, 3, 4, 7, 8, 9, 35, 204, 205}
		at := 0.0
		for len(b) >= 3 {
			id := ids[int(b[0])%len(ids)]
			th := uint64(b[1] % 4)
			at += float64(b[2]) / 10
			n := min(len(b)-3, int(b[0]>>4)*8)
			payload := b[3 : 3+n]
			fd.ev(id, uint32(b[1]>>4)%5, at, th, payload, uint32(b[2]>>7))
			b = b[3+n:]
		}
		res := fd.result()
		if err := res.CheckValid(); err != nil {
			t.Fatal(err)
		}
		if n := res.ByGen[0].Count + res.ByGen[1].Count + res.ByGen[2].Count; n != res.All.Count || res.All.Count != res.Complete {
			t.Fatalf("by generation %d, all %d, complete %d", n, res.All.Count, res.Complete)
		}
		seen := map[*GC]bool{}
		complete := 0
		for _, g := range fd.gcs {
			if seen[g] {
				t.Fatalf("GC %d emitted twice", g.Number)
			}
			seen[g] = true
			if g.Complete {
				complete++
			}
		}
		if complete != res.Complete {
			t.Fatalf("%d complete GCs emitted, result says %d", complete, res.Complete)
		}
		for _, g := range res.GCs {
			if g.Complete && g.PauseNanos < 0 {
				t.Fatalf("negative pause %+v", g)
			}
		}
		for _, s := range append(res.ByGen[:], res.All) {
			if s.TotalNanos > s.SumNanos || s.TotalNanos < 0 || s.RuntimeNanos < 0 || s.StartUnseen > s.Count {
				t.Fatalf("stopped time %d, sum %d, runtime %d, unseen %d of %d", s.TotalNanos, s.SumNanos, s.RuntimeNanos, s.StartUnseen, s.Count)
			}
		}
	})
}

// TestDistBounded: beyond exactCap values the percentiles come from the
// histogram, within 0.2 % of the exact ones.
func TestDistBounded(t *testing.T) {
	var d dist
	var all []int64
	x := uint64(12345)
	for i := 0; i < exactCap+50_000; i++ {
		x = x*6364136223846793005 + 1442695040888963407
		v := int64(x>>40) % 200_000_000 // up to 200 ms
		d.add(v)
		all = append(all, v)
	}
	if d.exact != nil || len(d.counts) == 0 {
		t.Fatal("did not switch to the histogram")
	}
	slices.Sort(all)
	got := d.percentiles(50, 90, 99, 99.9)
	for i, p := range []float64{50, 90, 99, 99.9} {
		want := percentile(all, p)
		if got[i] > want || float64(want-got[i]) > 0.002*float64(want) {
			t.Errorf("p%v = %d, exact %d", p, got[i], want)
		}
	}
	for _, v := range []int64{0, 1, 511, 512, 513, 1023, 1024, 1e6, 1e9, 1 << 40} {
		if b := bucket(v); lowest(b) > v || bucket(lowest(b)) != b {
			t.Errorf("bucket(%d) = %d, lowest %d", v, b, lowest(b))
		}
	}
}

// TestOverlappingStopsCountedOnce: a foreground GC suspends (on its own
// thread) while the background GC's final stop is still on, as GC 1855
// does inside BGC 1794's stop in the diagnostics trace. Each GC keeps its
// own pause; the total counts the stopped time once, whichever GC finishes
// first (here the foreground GC, so the BGC's stops join later).
func TestOverlappingStopsCountedOnce(t *testing.T) {
	f := newFeed(t)
	f.suspend(10, tGC, clrevents.SuspendForGC)
	f.suspended(11, tGC)
	f.start(11.5, tGC, 10, 2, clrevents.GCBackground, clrevents.ReasonAllocSmall)
	f.restart(12, tGC) // first stop: 2 ms
	f.suspend(100, tBGC, clrevents.SuspendForGCPrep)
	f.suspended(101, tBGC)
	f.suspend(104, tOther, clrevents.SuspendForGC) // waits for the BGC's stop
	f.restart(130, tBGC)                           // BGC stop: 30 ms
	f.suspended(131, tOther)
	f.start(132, tOther, 11, 0, clrevents.GCForeground, clrevents.ReasonAllocSmall)
	f.end(133, tOther, 11, 0)
	f.heapStats(133.5, tOther)
	f.restart(140, tOther)      // foreground: 104 → 140 = 36 ms, 26 of them inside the BGC's stop
	f.blocking(200, tGC, 12, 1) // 3 ms, alone
	f.end(300, tBGC, 10, 2)
	f.heapStats(301, tBGC)
	res := f.result()
	if res.Complete != 3 {
		t.Fatalf("%d complete", res.Complete)
	}
	near(t, "sum of pauses (PerfView)", res.All.SumNanos, 2+30+36+3)
	near(t, "stopped time", res.All.TotalNanos, 2+30+36+3-26)
	// Per generation each row counts its own GCs' stops once; the 26 ms
	// stopped by a gen2 and a gen0 GC at once belong to both rows.
	near(t, "gen0", res.ByGen[0].TotalNanos, 36)
	near(t, "gen1", res.ByGen[1].TotalNanos, 3)
	near(t, "gen2", res.ByGen[2].TotalNanos, 32)
	if p, want := res.All.PausePercent, float64(45)*100/(301-10); p < want-1e-9 || p > want+1e-9 {
		t.Errorf("%% paused %.6f, want %.6f (stopped time over the session)", p, want)
	}
	near(t, "mean (of the pauses)", res.All.MeanNanos, float64(2+30+36+3)/3)
}

// TestSpanSet checks the union against a brute-force count over random
// stops added in random order, with pruning behind a moving horizon.
func TestSpanSet(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 200; round++ {
		var u spanSet
		covered := make([]bool, 2000)
		var want int64
		// Stops arrive in batches; a batch's stops start after the
		// previous batch's horizon but may overlap it.
		base := int64(0)
		for batch := 0; batch < 5; batch++ {
			var ss []span
			for i := 0; i < 1+r.IntN(6); i++ {
				s := base + int64(r.IntN(150))
				ss = append(ss, span{s, s + int64(r.IntN(80))})
			}
			for _, s := range ss {
				for x := s.start; x < s.end; x++ {
					if !covered[x] {
						covered[x] = true
						want++
					}
				}
				u.add(s)
			}
			base += 150
			u.prune(base)
		}
		if u.total != want {
			t.Fatalf("round %d: union %d, brute force %d", round, u.total, want)
		}
	}
}

// TestStartUnseen: the session begins inside a GC's stop (GCStart, no
// SuspendEEBegin before it). Its 50 ms so far are a lower bound: counted in
// the totals, kept out of max, mean, percentiles, histogram and longest.
func TestStartUnseen(t *testing.T) {
	f := newFeed(t)
	f.start(1, tGC, 5, 0, clrevents.GCNonConcurrent, clrevents.ReasonAllocSmall)
	f.end(40, tGC, 5, 0)
	f.heapStats(41, tGC)
	f.restart(51, tGC)
	for i := 0; i < 3; i++ {
		f.blocking(100+float64(i)*10, tGC, uint32(6+i), 0) // 3 ms each
	}
	res := f.result()
	g := res.GCs[0]
	if g.StartSeen || !g.Complete || !g.NoSuspension || res.GCs[1].StartSeen != true {
		t.Fatalf("first GC %+v", g)
	}
	near(t, "lower-bound pause", g.PauseNanos, 50)
	a := res.All
	if a.Count != 4 || a.StartUnseen != 1 || res.ByGen[0].StartUnseen != 1 || res.Complete != 4 {
		t.Errorf("count %d unseen %d", a.Count, a.StartUnseen)
	}
	near(t, "total", a.TotalNanos, 50+9)
	near(t, "max", a.MaxNanos, 3)
	near(t, "mean", a.MeanNanos, 3)
	near(t, "p99", a.P99, 3)
	if n := res.All.Histogram.Count; n != 3 || len(res.Longest) != 3 || slices.Contains(res.Longest, g) {
		t.Errorf("histogram holds %d, longest %d", res.All.Histogram.Count, len(res.Longest))
	}
}

// TestRuntimePause: the runtime's own definition (runtime.go) per kind of
// GC, beside PerfView's, from events placed where gc.cpp reads its clock.
func TestRuntimePause(t *testing.T) {
	f := newFeed(t)
	// Workstation blocking GC: one thread; end_gc_time just before GCEnd.
	f.suspend(10, tGC, clrevents.SuspendForGC)
	f.suspended(10.5, tGC)
	f.start(10.6, tGC, 1, 0, clrevents.GCNonConcurrent, clrevents.ReasonAllocSmall)
	f.perHeap(11.8, tGC)
	f.end(12, tGC, 1, 0)
	f.heapStats(12.1, tGC)
	f.restart(13, tGC)
	// Server blocking GC: heap 0 (tGC) suspends and fires GCEnd after
	// waking from the join whose last thread (tOther) fired the heap
	// histories and read end_gc_time.
	f.suspend(20, tGC, clrevents.SuspendForGC)
	f.suspended(20.5, tGC)
	f.start(20.6, tOther, 2, 1, clrevents.GCNonConcurrent, clrevents.ReasonAllocSmall)
	f.perHeap(21.7, tOther)
	f.perHeap(21.8, tOther)
	f.end(24, tGC, 2, 1)
	f.heapStats(24.1, tGC)
	f.restart(25, tGC)
	// Background GC with the ephemeral GC at its start, its final-mark
	// stop, and a later GCPrep stop (heap walk) the runtime does not count.
	f.suspend(30, tGC, clrevents.SuspendForGC)
	f.suspended(30.5, tGC)
	f.start(30.6, tGC, 3, 2, clrevents.GCBackground, clrevents.ReasonAllocSmall)
	f.start(30.7, tGC, 4, 1, clrevents.GCNonConcurrent, clrevents.ReasonAllocSmall)
	f.perHeap(31.5, tGC)
	f.end(31.7, tGC, 4, 1)
	f.heapStats(31.8, tGC)
	f.ev(clrevents.IDGCRestartEEBegin, 1, 34, tGC, []byte{0, 0}, 0)
	f.ev(clrevents.IDGCRestartEEEnd, 1, 34.5, tGC, []byte{0, 0}, 0)
	// A foreground GC during the BGC: the runtime counts to its restart.
	f.suspend(50, tOther, clrevents.SuspendForGC)
	f.suspended(50.5, tOther)
	f.start(51, tOther, 5, 0, clrevents.GCForeground, clrevents.ReasonAllocSmall)
	f.perHeap(52, tOther)
	f.end(52.2, tOther, 5, 0)
	f.heapStats(52.3, tOther)
	f.ev(clrevents.IDGCRestartEEBegin, 1, 53, tOther, []byte{0, 0}, 0)
	f.ev(clrevents.IDGCRestartEEEnd, 1, 54, tOther, []byte{0, 0}, 0)
	f.suspend(60, tBGC, clrevents.SuspendForGCPrep)
	f.suspended(60.5, tBGC)
	f.ev(clrevents.IDGCRestartEEBegin, 1, 62, tBGC, []byte{0, 0}, 0)
	f.ev(clrevents.IDGCRestartEEEnd, 1, 62.6, tBGC, []byte{0, 0}, 0)
	f.suspend(70, tBGC, clrevents.SuspendForGCPrep)
	f.suspended(70.2, tBGC)
	f.restart(71, tBGC)
	f.end(80, tBGC, 3, 2)
	f.heapStats(80.1, tBGC)
	// A blocking GC whose GCEnd was lost: unknown.
	f.suspend(90, tGC, clrevents.SuspendForGC)
	f.suspended(90.5, tGC)
	f.start(90.6, tGC, 6, 0, clrevents.GCNonConcurrent, clrevents.ReasonAllocSmall)
	f.heapStats(91, tGC)
	f.restart(92, tGC)

	res := f.result()
	if res.Complete != 6 {
		t.Fatalf("%d complete", res.Complete)
	}
	byNum := map[uint32]*GC{}
	for _, g := range res.GCs {
		byNum[g.Number] = g
	}
	for _, c := range []struct {
		n                 uint32
		perfView, runtime float64
	}{
		{1, 3, 12 - 10},                       // SuspendEEBegin → GCEnd
		{2, 5, 21.8 - 20},                     // SuspendEEBegin → last GCPerHeapHistory
		{4, 34.5 - 30.7, 31.7 - 30.7},         // GCStart → GCEnd
		{3, 0.5 + 2.6 + 1, (34 - 30) - 1 + 2}, // first stop less the ephemeral GC's share, + final mark
		{5, 4, 53 - 50},                       // SuspendEEBegin → RestartEEBegin
	} {
		g := byNum[c.n]
		near(t, fmt.Sprintf("GC %d pause", c.n), g.PauseNanos, c.perfView)
		near(t, fmt.Sprintf("GC %d runtime pause", c.n), g.PauseRuntimeNanos, c.runtime)
	}
	if g := byNum[6]; g.PauseRuntimeNanos != -1 || g.PauseNanos != msT(2) {
		t.Errorf("GC without GCEnd: runtime %d, pause %d", g.PauseRuntimeNanos, g.PauseNanos)
	}
	near(t, "runtime total", res.All.RuntimeNanos, 2+1.8+1+5+3)
	near(t, "gen2 runtime total", res.ByGen[2].RuntimeNanos, 5)
}
