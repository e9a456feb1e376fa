package triage

import (
	"slices"

	"github.com/clrspy/clrspy/gcpause"
)

// GCTally is what triage counts of each GC beside the pause analysis'
// rollup: the blocking gen2 and LOH-triggered GCs, the old generations'
// size after each GC with heap statistics (the memory trend), the
// largest pinned-object count, gen2's last fragmentation, and the latest
// complete induced GCs, among which a heap snapshot's own GC is found
// (gcpause's HeapDump mark in the stream, or a mark from another session
// given when the facts are made). The Analyzer keeps one over its stream,
// a live model one since its session began: one count of the GCs on every
// surface. Add takes each GC as gcpause reports it (Options.OnGC); the
// zero value is ready.
type GCTally struct {
	gen2Blocking, loh int
	gcs               int // GCs with heap statistics
	// pts: gen2+LOH+POH after each GC with heap statistics, for the
	// trend after the warm-up; at most maxOldPoints (every other one
	// dropped when full, the first and the latest kept).
	pts                 []HeapPoint
	gen2MB, lohMB, frag float64
	hasFrag             bool
	pinned              uint32
	// dumps: the latest complete induced GCs (and the stream's heap
	// snapshots' GCs), at most maxDumps; marked the GCs the stream
	// marked a heap snapshot's (HeapDump), at most maxDumps.
	dumps  []dumpGC
	marked []uint32
}

// dumpGC is an induced GC that a heap snapshot may have made.
type dumpGC struct {
	number          uint32
	pauseNs, stopNs int64
	gen2Blocking    bool
}

// maxDumps bounds the induced GCs and the marks kept.
const maxDumps = 64

// Add counts one GC (complete, or given up as incomplete).
func (t *GCTally) Add(g *gcpause.GC) {
	if g.HeapDump && !slices.Contains(t.marked, g.Number) && len(t.marked) < maxDumps {
		t.marked = append(t.marked, g.Number)
	}
	if !g.Complete {
		return
	}
	blocking := Gen2Blocking(g.Generation, g.Type)
	if g.Induced || g.HeapDump {
		if len(t.dumps) == maxDumps {
			t.dumps = append(t.dumps[:0], t.dumps[1:]...)
		}
		t.dumps = append(t.dumps, dumpGC{g.Number, max(g.PauseRuntimeNanos, 0), g.PauseNanos, blocking})
	}
	if blocking {
		t.gen2Blocking++
	}
	if LOHTriggered(g.Reason) {
		t.loh++
	}
	if !g.HasHeapStats {
		return
	}
	h := &g.HeapStats
	old := float64(h.GenerationSize[2]+h.GenerationSize[3]) / mb
	if h.HasPOH {
		old += float64(h.GenerationSize[4]) / mb
	}
	t.gcs++
	if len(t.pts) == maxOldPoints {
		k := 1
		for i := 2; i < len(t.pts); i += 2 {
			t.pts[k] = t.pts[i]
			k++
		}
		t.pts = t.pts[:k]
	}
	t.pts = append(t.pts, HeapPoint{Nanos: g.StartNanos, OldMB: old})
	t.gen2MB, t.lohMB = float64(h.GenerationSize[2])/mb, float64(h.GenerationSize[3])/mb
	t.pinned = max(t.pinned, h.PinnedObjectCount)
	if g.Generation == 2 {
		if p := g.FragmentationPercent(2); p >= 0 {
			t.frag, t.hasFrag = p, true
		}
	}
}

// Clone is a copy that shares nothing with t (a live model's snapshot).
func (t *GCTally) Clone() *GCTally {
	c := *t
	c.pts, c.dumps, c.marked = slices.Clone(t.pts), slices.Clone(t.dumps), slices.Clone(t.marked)
	return &c
}

// snapshot is the heap snapshots' own GCs among the induced ones kept:
// those the stream marked and those in marks (another session's), their
// pauses summed; and how many of them were blocking gen2 GCs. With
// none found, the first mark the stream made still names the GC.
func (t *GCTally) snapshot(marks []uint32) (Snapshot, int) {
	var s Snapshot
	blocking := 0
	for _, d := range t.dumps {
		if !slices.Contains(t.marked, d.number) && !slices.Contains(marks, d.number) {
			continue
		}
		if s.GC == 0 {
			s.GC = d.number
		}
		s.Count++
		s.PauseNanos += d.pauseNs
		s.StopNanos += d.stopNs
		if d.gen2Blocking {
			blocking++
		}
	}
	if s.GC == 0 && len(t.marked) > 0 {
		s.GC = t.marked[0]
	}
	return s, blocking
}

// fill sets g's per-GC counts and x's memory facts, the heap snapshots'
// GCs (snap) kept out of the application's blocking gen2 GCs.
func (t *GCTally) fill(g *GCFacts, x *MemoryFacts, snapBlocking int) {
	g.Gen2Blocking, g.LOHTriggered = max(t.gen2Blocking-snapBlocking, 0), t.loh
	MemoryFrom(x, t.gcs, t.pts)
	x.Gen2MB, x.LOHMB = t.gen2MB, t.lohMB
	x.Gen2FragPct, x.HasFragmentation = t.frag, t.hasFrag
	x.MaxPinned = t.pinned
}
