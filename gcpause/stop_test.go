//go:build compat

package gcpause

import (
	"testing"

	"github.com/clrspy/clrspy/clrevents"
)

// TestOnStop: every stop a GC is credited with is reported once, with the
// suspension's own times. On diagnostics__trace.nettrace the BGC 1794
// reports its two SuspendForGCPrep stops (hand-computed in
// TestDiagnosticsBGC: 4055.2142→4066.9308 and 5316.1561→5378.0979); its
// initial stop (1726.2651→1738.2850) is reported with the ephemeral GC
// 1795 that ran in it; the stops of complete blocking GCs add up to their
// pauses.
func TestOnStop(t *testing.T) {
	var stops []Stop
	res, _ := analyze(t, "diagnostics__trace.nettrace", Options{OnStop: func(s *Stop) { stops = append(stops, *s) }})
	byGC := map[uint32][]Stop{}
	for _, s := range stops {
		if s.EndNanos < s.StartNanos || (s.SuspendEndNanos >= 0 && (s.SuspendEndNanos < s.StartNanos || s.SuspendEndNanos > s.EndNanos)) {
			t.Errorf("GC %d: stop times out of order: %+v", s.GC.Number, s)
		}
		byGC[s.GC.Number] = append(byGC[s.GC.Number], s)
	}
	near := func(name string, got int64, wantMS float64) {
		t.Helper()
		if d := float64(got)/1e6 - wantMS; d > 0.0002 || d < -0.0002 {
			t.Errorf("%s = %.4f ms, want %.4f", name, float64(got)/1e6, wantMS)
		}
	}
	bgc := byGC[1794]
	if len(bgc) != 2 {
		t.Fatalf("BGC 1794: %d stops, want its 2 later ones", len(bgc))
	}
	near("BGC stop 1 start", bgc[0].StartNanos, 4055.2142)
	near("BGC stop 1 end", bgc[0].EndNanos, 4066.9308)
	near("BGC stop 2 end", bgc[1].EndNanos, 5378.0979)
	eph := byGC[1795]
	if len(eph) != 1 {
		t.Fatalf("ephemeral GC 1795: %d stops", len(eph))
	}
	near("initial stop start", eph[0].StartNanos, 1726.2651)
	near("initial stop suspended", eph[0].SuspendEndNanos, 1728.0459)
	near("initial stop end", eph[0].EndNanos, 1738.2850)
	blocking := 0
	for _, g := range res.GCs {
		if !g.Complete || g.Type == clrevents.GCBackground || g.NoSuspension || g.Number == 1795 {
			continue
		}
		st := byGC[g.Number]
		if len(st) != 1 {
			t.Errorf("GC %d: %d stops", g.Number, len(st))
			continue
		}
		blocking++
		// An ephemeral GC at a background GC's start pauses from its own
		// GCStart, inside the stop (PerfView's rule): the stop is longer.
		if st[0].StartNanos > g.PauseStartNanos || st[0].EndNanos != g.PauseEndNanos || st[0].EndNanos-st[0].StartNanos < g.PauseNanos {
			t.Errorf("GC %d: stop %+v, pause %d..%d (%d ns)", g.Number, st[0], g.PauseStartNanos, g.PauseEndNanos, g.PauseNanos)
		}
	}
	if blocking < 300 {
		t.Errorf("%d blocking GCs checked; the trace has 380", blocking)
	}
}
