package stacks

import (
	"slices"
	"testing"

	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/nettrace"
)

// ResultStacks is Result without the sample list: the same frames, threads
// and counters, and StackOf names every raw stack alike (on the composite
// fixture, whose samples are managed and external). Release keeps StackOf
// and Stats. StacksOnly (the report page's) changes none of it and keeps
// fewer sums.
func TestResultStacksIsResultWithoutSamples(t *testing.T) {
	read := func(o Options) *Builder {
		r := tracetest.Open(t, "composite.nettrace", nettrace.NewReader)
		b := New(r.Header(), o)
		if err := tracetest.ReadAll(t, r, b.Event); err != nil {
			t.Fatal(err)
		}
		return b
	}
	whole, part := read(Options{}), read(Options{StacksOnly: true})
	if n, m := whole.accs.len(), part.accs.len(); m >= n || m == 0 {
		t.Fatalf("StacksOnly keeps %d sums, per thread %d", m, n)
	}
	w, p := whole.Result(), part.ResultStacks()
	if len(w.Samples) == 0 || p.Samples != nil {
		t.Fatalf("%d samples in Result, %d in ResultStacks", len(w.Samples), len(p.Samples))
	}
	if w.Total != p.Total || w.Managed != p.Managed || w.External != p.External || w.Unresolved != p.Unresolved ||
		w.Truncated != p.Truncated || len(w.Threads) != len(p.Threads) || !slices.Equal(w.Frames, p.Frames) {
		t.Fatalf("ResultStacks differs: total %d/%d, unresolved %d/%d, %d/%d frames", w.Total, p.Total, w.Unresolved, p.Unresolved, len(w.Frames), len(p.Frames))
	}
	if w.External == 0 {
		t.Fatal("the fixture has no external samples: the [native code] leaf goes untested")
	}
	stats := part.Stats()
	part.Release()
	if part.Stats() != stats {
		t.Fatalf("Stats after Release %+v, before %+v", part.Stats(), stats)
	}
	for raw := range int32(len(whole.raws)) {
		for _, ext := range []bool{false, true} {
			if a, b := whole.StackOf(raw, ext), part.StackOf(raw, ext); !slices.Equal(a, b) {
				t.Fatalf("StackOf(%d, %v): %v, want %v", raw, ext, b, a)
			}
		}
	}
}
