package gcpause

import (
	"testing"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/internal/tracetest"
)

// TestOnStopped: on gc-induced.nettrace (blocking GCs only) every GC's
// pause is exactly one Stopped carrying its number, from its
// SuspendEEBegin to its RestartEEEnd, and the Stopped intervals are in
// order and never inverted.
func TestOnStopped(t *testing.T) {
	var got []analysis.Stopped
	res, _, end := analyzeFile(t, tracetest.Path(t, "gc-induced.nettrace"),
		Options{OnStopped: func(s *analysis.Stopped) { got = append(got, *s) }})
	if end != nil {
		t.Fatal(end)
	}
	byGC := map[uint32][]analysis.Stopped{}
	var last int64
	for _, s := range got {
		if s.EndNanos < s.BeginNanos || s.EndNanos < last {
			t.Errorf("stopped out of order: %+v (previous end %d)", s, last)
		}
		last = s.EndNanos
		if s.GC != 0 {
			byGC[s.GC] = append(byGC[s.GC], s)
		}
	}
	if len(res.GCs) == 0 {
		t.Fatal("no GCs")
	}
	for _, g := range res.GCs {
		st := byGC[g.Number]
		if len(st) != 1 {
			t.Errorf("GC %d: %d Stopped, want 1", g.Number, len(st))
			continue
		}
		if st[0].BeginNanos != g.PauseStartNanos || st[0].EndNanos != g.PauseEndNanos {
			t.Errorf("GC %d: Stopped %d..%d, GC pause %d..%d", g.Number, st[0].BeginNanos, st[0].EndNanos, g.PauseStartNanos, g.PauseEndNanos)
		}
	}
	if len(byGC) != len(res.GCs) {
		t.Errorf("Stopped name %d GCs, the result has %d", len(byGC), len(res.GCs))
	}
}
