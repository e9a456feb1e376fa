package monitor_test

import (
	"testing"

	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/internal/monitor"
	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/source"
)

// TestTriageFactsHeapDumpBeyondRows: a heap snapshot's GC that another
// session marked (TriageEnv.HeapDumpGCs) stays out of the application's
// induced GCs and pauses after the monitor's kept rows have moved past it
// (MaxGCs 1): the monitor counts every GC in triage's tally
// (triage.GCTally), not over its rows. gc-induced has 9 induced GCs;
// marking the first leaves 8 and its pause out.
func TestTriageFactsHeapDumpBeyondRows(t *testing.T) {
	st, err := source.Open(source.Spec{File: tracetest.Path(t, "gc-induced.nettrace")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var induced []gcpause.GCRow
	m := monitor.New(st.Header(), monitor.Options{MaxGCs: 1, OnGC: func(g *gcpause.GC) {
		if g.Induced && g.Complete {
			induced = append(induced, gcpause.NewGCRow(g))
		}
	}})
	if _, err := st.Run(m); err != nil {
		t.Fatal(err)
	}
	snap := m.Snapshot()
	if len(induced) != 9 || len(snap.GCs) != 1 {
		t.Fatalf("%d induced GCs, %d rows; want 9 and 1", len(induced), len(snap.GCs))
	}
	first := induced[0]
	plain := monitor.TriageFacts(snap, monitor.TriageEnv{CPUDemandPct: -1})
	marked := monitor.TriageFacts(snap, monitor.TriageEnv{CPUDemandPct: -1, HeapDumpGCs: []uint32{first.Number}})
	if plain.GC.Induced != 9 || marked.GC.Induced != 8 || marked.GC.SnapshotGC != first.Number {
		t.Errorf("induced %d unmarked, %d marked (snapshot GC %d); want 9, 8 and GC %d", plain.GC.Induced, marked.GC.Induced, marked.GC.SnapshotGC, first.Number)
	}
	want := first.PauseRuntimeMS.Or(0)
	if got := plain.GC.PausedMs - marked.GC.PausedMs; want <= 0 || got < want-1e-6 || got > want+1e-6 || marked.GC.SnapshotPauseMs != want {
		t.Errorf("paused %.6f ms unmarked, %.6f marked (snapshot's %.6f); want the snapshot's %.6f ms out", plain.GC.PausedMs, marked.GC.PausedMs, marked.GC.SnapshotPauseMs, want)
	}
}
