package stacks

import (
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/nettrace"
)

// The timeline keeps every sample's count whatever its bound: bins widen
// and merge, runs stay at or under the bound.
func TestTimelineBounded(t *testing.T) {
	tl := NewTimeline(100)
	// 3 stacks, one sample each per ms for 10 s: 30,000 runs at 1 ms.
	for ms := int64(0); ms < 10_000; ms++ {
		for s := int32(0); s < 3; s++ {
			tl.Add(RawSample{Stack: s, External: s == 2, Nanos: ms * 1e6})
		}
	}
	if tl.Runs() > 100 {
		t.Errorf("%d runs, bound 100", tl.Runs())
	}
	// 30,000 runs → under 100 needs 512 ms bins (10 s / 0.512 s = 20 runs a stack).
	if tl.BinNanos() != 512e6 {
		t.Errorf("bins of %d ns", tl.BinNanos())
	}
	total := map[int32]int64{}
	ext := map[int32]bool{}
	tl.Each(func(s int32, external bool, bins []Bin) {
		for i, b := range bins {
			total[s] += int64(b.Count)
			if i > 0 && b.Index <= bins[i-1].Index {
				t.Errorf("stack %d: bins out of order", s)
			}
		}
		ext[s] = external
		if got := tl.AppendBins([]Bin{{7, 7}}, s, external); len(got) != len(bins)+1 || got[0] != (Bin{7, 7}) || !slices.Equal(got[1:], bins) {
			t.Errorf("AppendBins(%d, %v) = %v, Each gave %v", s, external, got, bins)
		}
		if got := tl.AppendBins(nil, s, !external); len(got) != 0 {
			t.Errorf("AppendBins(%d, %v) = %v for a series with no samples", s, !external, got)
		}
	})
	if got := tl.AppendBins(nil, 99, false); got != nil {
		t.Errorf("AppendBins of an unknown stack: %v", got)
	}
	for s := int32(0); s < 3; s++ {
		if total[s] != 10_000 || ext[s] != (s == 2) {
			t.Errorf("stack %d: %d samples, external %v", s, total[s], ext[s])
		}
	}
	// The window [2.048 s, 4.096 s) is exactly 4 bins: 2,048 samples a stack.
	got := map[int32]int64{}
	tl.Window(2048e6, 4096e6, func(s int32, _ bool, n int64) { got[s] = n })
	for s := int32(0); s < 3; s++ {
		if got[s] != 2048 {
			t.Errorf("window: stack %d has %d samples, want 2048", s, got[s])
		}
	}
}

// Samples seen through OnSample and named with StackOf add up to the
// profile the builder returns, stack by stack.
func TestOnSampleStackOf(t *testing.T) {
	r := tracetest.Open(t, "composite.nettrace", nettrace.NewReader)
	type key struct {
		raw int32
		ext bool
	}
	seen := map[key]int64{}
	var weight int64
	b := New(r.Header(), Options{OnSample: func(s RawSample) { seen[key{s.Stack, s.External}]++; weight += s.Weight }})
	if err := tracetest.ReadAll(t, r, b.Event); err != nil {
		t.Fatal(err)
	}
	p := b.Result()
	want := map[string]int64{}
	var wantWeight, n int64
	for _, s := range p.Samples {
		want[p.Folded(&s, ";")] += s.Count
		wantWeight += s.Nanos
		n += s.Count
	}
	got := map[string]int64{}
	for k, c := range seen {
		st := b.StackOf(k.raw, k.ext)
		got[p.Folded(&Sample{Stack: st}, ";")] += c
	}
	if n != 1283 || len(got) != len(want) {
		t.Fatalf("%d samples; %d stacks named, profile has %d", n, len(got), len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %d samples through OnSample, %d in the profile", k, got[k], v)
		}
	}
	if weight != wantWeight {
		t.Errorf("OnSample weights sum to %d ns, the profile's to %d", weight, wantWeight)
	}
	if st := b.StackOf(int32(len(seen)+1000), false); st != nil {
		t.Errorf("unknown raw stack named %v", st)
	}
}

// The timeline is every sample counted in bins of its final width, however
// many times it coarsened: samples in time order, with gaps of many bins
// and runs of hundreds of samples (varints of more than one byte).
func TestTimelineIsExactAtItsWidth(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var random, sparse []RawSample
	ns := int64(0)
	for range 200_000 {
		switch r := rng.IntN(100); {
		case r < 2:
			ns += rng.Int64N(1e12) // a long gap
		case r < 60:
			ns += rng.Int64N(1e6)
		}
		random = append(random, RawSample{Stack: int32(rng.IntN(40)), External: rng.IntN(3) == 0, Nanos: ns})
	}
	// Stack 0: 50 samples a ms for 10 s; stack 1: one a second for 500 s.
	for ms := range int64(500_000) {
		if ms < 10_000 {
			for range 50 {
				sparse = append(sparse, RawSample{Stack: 0, Nanos: ms * 1e6})
			}
		}
		if ms%1000 == 0 {
			sparse = append(sparse, RawSample{Stack: 1, Nanos: ms * 1e6})
		}
	}
	testTimelineExact(t, random, 4000)
	if gap, run := testTimelineExact(t, sparse, 4000); gap < 128 || run < 128 {
		t.Errorf("largest gap %d bins, run %d samples: the varints are all one byte", gap, run)
	}
}

// testTimelineExact checks a timeline of samples and returns its largest
// gap between runs (in bins) and its largest run.
func testTimelineExact(t *testing.T, samples []RawSample, maxRuns int) (gap, run uint64) {
	tl := NewTimeline(maxRuns)
	for _, s := range samples {
		tl.Add(s)
	}
	type key struct {
		k   int32
		bin int64
	}
	if tl.Runs() > maxRuns || tl.BinNanos() <= 1e6 {
		t.Fatalf("%d runs, bins of %d ns: the bound did not make it coarsen", tl.Runs(), tl.BinNanos())
	}
	for i := range tl.series {
		sr := &tl.series[i]
		for r := 0; r < len(sr.runs); {
			d, n := binary.Uvarint(sr.runs[r:])
			r += n
			c, n := binary.Uvarint(sr.runs[r:])
			r += n
			gap, run = max(gap, d), max(run, c)
		}
	}
	want := map[key]int32{}
	for _, s := range samples {
		k := 2 * s.Stack
		if s.External {
			k++
		}
		want[key{k, s.Nanos / tl.BinNanos()}]++
	}
	got := map[key]int32{}
	runs := 0
	tl.Each(func(stack int32, external bool, bins []Bin) {
		k := 2 * stack
		if external {
			k++
		}
		for i, b := range bins {
			if i > 0 && b.Index <= bins[i-1].Index {
				t.Fatalf("stack %d: bins out of order: %v", k, bins)
			}
			got[key{k, int64(b.Index)}] = b.Count
		}
		runs += len(bins)
	})
	if runs != tl.Runs() || len(got) != len(want) {
		t.Fatalf("%d runs read, Runs() %d; %d bins, want %d", runs, tl.Runs(), len(got), len(want))
	}
	for k, n := range want {
		if got[k] != n {
			t.Fatalf("series %d bin %d: %d samples, want %d", k.k, k.bin, got[k], n)
		}
	}
	from, to := samples[len(samples)/3].Nanos, samples[2*len(samples)/3].Nanos
	lo, hi := from/tl.BinNanos(), (to+tl.BinNanos()-1)/tl.BinNanos()
	wantWin := map[int32]int64{}
	for k, n := range want {
		if k.bin >= lo && k.bin < hi {
			wantWin[k.k] += int64(n)
		}
	}
	gotWin := map[int32]int64{}
	tl.Window(from, to, func(stack int32, external bool, n int64) {
		k := 2 * stack
		if external {
			k++
		}
		gotWin[k] = n
	})
	if len(gotWin) != len(wantWin) {
		t.Fatalf("window: %d series, want %d", len(gotWin), len(wantWin))
	}
	for k, n := range wantWin {
		if gotWin[k] != n {
			t.Errorf("window: series %d has %d samples, want %d", k, gotWin[k], n)
		}
	}
	return gap, run
}
