package stacks

import (
	"bytes"
	"reflect"
	"slices"
	"testing"

	"github.com/clrspy/clrspy/internal/tracegen"
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

// Concurrent sums (a batch summed on another goroutine while the next
// fills) give the profile a one-goroutine builder gives, Result taken mid-
// stream included: a generated trace of 4 MiB has about 160,000 samples,
// twenty batches, on 64 threads.
func TestConcurrentSameProfile(t *testing.T) {
	var buf bytes.Buffer
	if _, err := tracegen.Large(&buf, 4<<20, 7); err != nil {
		t.Fatal(err)
	}
	read := func(o Options) (mid, end *Profile) {
		r, err := nettrace.NewReader(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		b := New(r.Header(), o)
		n := 0
		err = tracetest.ReadAll(t, r, func(ev *nettrace.Event) {
			b.Event(ev)
			if n++; n == 100_000 {
				mid = b.Result()
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		return mid, b.Result()
	}
	mid1, end1 := read(Options{})
	mid2, end2 := read(Options{Concurrent: true})
	for _, p := range []*Profile{mid1, end1, mid2, end2} {
		if err := p.CheckValid(); p != nil && err != nil {
			t.Error(err)
		}
	}
	if mid1 == nil || end1.Total < 5*accBatch || len(end1.Threads) != 64 {
		t.Fatalf("the trace has %d samples on %d threads (mid-stream result %v): too few to test batches", end1.Total, len(end1.Threads), mid1 != nil)
	}
	if !reflect.DeepEqual(mid1, mid2) {
		t.Fatalf("mid-stream results differ: %d/%d samples, %d/%d sums", mid1.Total, mid2.Total, len(mid1.Samples), len(mid2.Samples))
	}
	if !reflect.DeepEqual(end1, end2) {
		t.Fatalf("results differ: %d/%d samples, %d/%d sums", end1.Total, end2.Total, len(end1.Samples), len(end2.Samples))
	}
}
