package requests

import (
	"testing"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/nettrace"
)

// stoppedFeed returns a feed of suspensions past every bound of a (the
// pauses and suspensions kept, Options.MaxGCs): the sample profiler's
// (one per millisecond) and the GCs', two stops of each GC.
func stoppedFeed(a *Analyzer) func() {
	s, i := analysis.Stopped{}, 0
	feed := func() {
		t := int64(i) * 1_000_000
		s.GC, s.BeginNanos, s.EndNanos = 0, t, t+20_000
		if i%4 != 0 {
			s.GC = uint32(i/8 + 1)
		}
		a.Stopped(&s)
		i++
	}
	for range 5 * maxPauses { // each ring full
		feed()
	}
	return feed
}

// BenchmarkStopped: the suspensions' path (analysis.StoppedObserver) of a
// session that runs for days allocates nothing per suspension.
func BenchmarkStopped(b *testing.B) {
	feed := stoppedFeed(New(&nettrace.Header{PointerSize: 8}, Options{MaxGCs: 256}))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		feed()
	}
}

// TestStoppedNoAlloc: BenchmarkStopped's claim, held by a test, with the
// default bound on the GCs kept.
func TestStoppedNoAlloc(t *testing.T) {
	feed := stoppedFeed(New(&nettrace.Header{PointerSize: 8}, Options{}))
	if n := testing.AllocsPerRun(100_000, feed); n != 0 {
		t.Errorf("%v allocations per suspension, want 0", n)
	}
}

// TestStoppedBounds: past its bounds the analysis keeps the latest
// pauses, suspensions and GCs, and counts the GCs it let go.
func TestStoppedBounds(t *testing.T) {
	a := New(&nettrace.Header{PointerSize: 8}, Options{MaxGCs: 3})
	for i := range maxPauses + 10 {
		a.Stopped(&analysis.Stopped{GC: uint32(i/2 + 1), BeginNanos: int64(i) * 100, EndNanos: int64(i)*100 + 10})
	}
	if a.pauses.Len() != maxPauses || a.pauses.Back(0).gc != uint32((maxPauses+9)/2+1) || a.pauses.At(0).begin != 1000 {
		t.Errorf("pauses: %d kept, newest of GC %d, oldest begins at %d", a.pauses.Len(), a.pauses.Back(0).gc, a.pauses.At(0).begin)
	}
	r := a.Result()
	if len(r.GCs) != 3 || r.GCs[0].GC != uint32((maxPauses+9)/2-1) || r.GCs[2].PauseNanos != 20 {
		t.Errorf("GCs %+v", r.GCs)
	}
	if want := int64((maxPauses+10)/2 - 3); r.GCsDropped != want {
		t.Errorf("%d GCs dropped, want %d", r.GCsDropped, want)
	}
}
