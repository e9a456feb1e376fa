package heapgraph_test

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/heapgraph"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/source"
)

// dumpStops records the stops a Set hands out.
type dumpStops struct{ got []analysis.Stopped }

func (d *dumpStops) Event(*nettrace.Event)       {}
func (d *dumpStops) Stats() analysis.Stats       { return analysis.Stats{} }
func (d *dumpStops) Stopped(s *analysis.Stopped) { d.got = append(d.got, *s) }

// TestSnapshotPauseFromGCPause: in a Set, the pause analysis marks the GC
// the heap snapshot induced (HeapDump: the one the builder takes the dump
// from, its only one) and its stop is the snapshot's pause, paired once
// by gcpause: the builder's Pause is that stop's length, to the
// nanosecond. Fixture: testdata/traces/heap-graph.nettrace.gz, a `clrspy
// record --profile gcdump` of a workload that never collects.
func TestSnapshotPauseFromGCPause(t *testing.T) {
	path := filepath.Join(t.TempDir(), "heap-graph.nettrace")
	gz, err := os.Open("../testdata/traces/heap-graph.nettrace.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer gz.Close()
	zr, err := gzip.NewReader(gz)
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, zr); err != nil {
		t.Fatal(err)
	}
	out.Close()

	s := analysis.NewSet()
	gc := gcpause.In(s, gcpause.Options{})
	b := analysis.Add(s, heapgraph.Spec, func(h *nettrace.Header) *heapgraph.Builder { return heapgraph.NewBuilder(h, nil) })
	stops := analysis.Add(s, analysis.Spec{Name: "stops", Keep: gcpause.Wants}, func(*nettrace.Header) *dumpStops { return &dumpStops{} })
	st, err := source.Open(source.Spec{File: path, Keep: s.Keep()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s.Start(st.Header())
	if _, err := st.Run(s); err != nil {
		t.Fatal(err)
	}
	g, err := b.Get().Graph()
	if err != nil {
		t.Fatal(err)
	}
	var dumps []uint32
	for _, x := range gc.Get().Result().GCs {
		if x.HeapDump {
			dumps = append(dumps, x.Number)
		}
	}
	if len(dumps) != 1 || dumps[0] != g.GC || g.GC == 0 {
		t.Fatalf("GCs marked as the heap dump's: %v; the builder's dump GC: %d", dumps, g.GC)
	}
	var dumpStops []analysis.Stopped
	for _, x := range stops.Get().got {
		if x.HeapDump {
			dumpStops = append(dumpStops, x)
		}
	}
	if len(dumpStops) != 1 || dumpStops[0].GC != g.GC {
		t.Fatalf("stops marked as the dump's: %+v", dumpStops)
	}
	if want := time.Duration(dumpStops[0].EndNanos - dumpStops[0].BeginNanos); g.Pause != want || want <= 0 {
		t.Errorf("snapshot pause %v, want the dump GC's stop %v", g.Pause, want)
	}
}
