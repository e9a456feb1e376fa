package heap

import (
	"encoding/json"
	"testing"

	"github.com/clrspy/clrspy/internal/tracetest"
)

// TestFixtures replays the fixtures with allocation samples and movement
// events (testdata/traces: gc-induced has AllocationTick v4 and both kinds
// of ranges, heap-alloc .NET 10's AllocationSampled and moved ranges): every
// GC of the run is seen, no contradiction, nothing undecodable; the counts
// are kept in testdata/fixtures.golden.json.
func TestFixtures(t *testing.T) {
	got := map[string]summary{}
	for _, name := range []string{"gc-induced.nettrace", "heap-alloc.nettrace"} {
		r := replay(t, tracetest.Path(t, name))
		s := summarize(r)
		got[name] = s
		w := tracetest.Workload(t, name)
		if s.GCs != w.Gen0 || s.GCsWithoutRanges != 0 || s.Contradictions.Total() != 0 || s.DecodeErrors != 0 || s.CorruptEvents != 0 {
			t.Errorf("%s: %+v; the runtime counted %d GCs", name, s, w.Gen0)
		}
	}
	if s := got["gc-induced.nettrace"]; s.AllocationTicks != 26 || s.Tracked != 26 || s.MovedRanges != 763 || s.SurvivingRanges != 21 {
		t.Errorf("gc-induced: %+v", s)
	}
	if s := got["heap-alloc.nettrace"]; s.Tracked != 637 || s.AllocationTicks != 0 || s.MovedRanges != 3414 {
		t.Errorf("heap-alloc: %+v", s)
	}
	b, _ := json.MarshalIndent(got, "", "  ")
	tracetest.Golden(t, "fixtures.golden.json", append(b, '\n'))
}

// TestKeptObjectsSurvive: the induced workload allocates 10,000 byte[64]
// (88-byte System.Byte[] objects) before its first GC and keeps them to the
// end. The 9 of them that allocation ticks sampled must come out alive, in
// gen2, having lived through every GC of the run.
func TestKeptObjectsSurvive(t *testing.T) {
	w := tracetest.Workload(t, "gc-induced.nettrace")
	if w.Int("kept") != 10000 {
		t.Fatalf("workload kept %d objects", w.Int("kept"))
	}
	r := replay(t, tracetest.Path(t, "gc-induced.nettrace"))
	n := 0
	for _, o := range r.Objects {
		if o.Type != "System.Byte[]" || o.Size != 88 {
			continue
		}
		n++
		if !o.Alive || o.Gen != Gen2 || o.MaxGen != Gen2 || o.GCsSeen != w.Gen0 || o.Replaced {
			t.Errorf("kept object %+v", o)
		}
	}
	if n != 9 {
		t.Errorf("%d kept objects sampled, want 9", n)
	}
}
