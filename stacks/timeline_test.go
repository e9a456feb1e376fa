package stacks

import (
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
