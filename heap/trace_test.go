package heap

import (
	"errors"
	"testing"

	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/nettrace"
)

// replay runs the whole trace at path (a cut one up to its cut) through a
// Tracker.
func replay(tb testing.TB, path string) *Result {
	tb.Helper()
	r := tracetest.OpenFile(tb, path, nettrace.NewReader)
	tr := New(r.Header(), Options{})
	if err := tracetest.ReadAll(tb, r, tr.Event); err != nil && !errors.Is(err, nettrace.ErrTruncated) {
		tb.Fatal(err)
	}
	tr.Finish()
	res := tr.Result()
	if err := res.CheckValid(); err != nil {
		tb.Errorf("%s: %v", path, err)
	}
	return res
}

// summary is what the golden file records per trace.
type summary struct {
	GCs              int
	GCsWithoutRanges int
	RangeEvents      int
	MovedRanges      int
	SurvivingRanges  int
	AllocationTicks  int
	Untracked        int
	Tracked          int
	Remapped         int // object moves summed over GCs
	InPlace          int
	Dead             int
	AliveAtEnd       int
	ReachedGen2      int
	GenCorrections   int
	GenConfirmed     int
	DecodeErrors     int
	CorruptEvents    int
	Contradictions   Contradictions
}

func summarize(r *Result) summary {
	s := summary{GCs: len(r.GCs), GCsWithoutRanges: r.Stats.GCsWithoutRanges, RangeEvents: r.Stats.RangeEvents,
		MovedRanges: r.Stats.MovedRanges, SurvivingRanges: r.Stats.SurvivingRanges,
		AllocationTicks: r.Stats.AllocationTicks, Untracked: r.Stats.Untracked, Tracked: r.Stats.Tracked,
		GenCorrections: r.Stats.GenCorrections, GenConfirmed: r.Stats.GenConfirmed, DecodeErrors: r.Stats.DecodeErrors, CorruptEvents: r.Stats.CorruptRangeEvents, Contradictions: r.Stats.Contradictions}
	for _, g := range r.GCs {
		s.Remapped += g.Remapped
		s.InPlace += g.InPlace
	}
	for _, o := range r.Objects {
		if o.Alive {
			s.AliveAtEnd++
		} else {
			s.Dead++
		}
		if o.MaxGen >= Gen2 {
			s.ReachedGen2++
		}
	}
	return s
}
