package gcpause

import (
	"compress/gzip"
	"io"
	"testing"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/nettrace"
)

// runtimeGenSizes is one entry of the bgcmix workload's work.gcs: what
// GC.GetGCMemoryInfo said about GC number Index, per generation (gen0,
// gen1, gen2, LOH, POH), summed over heaps by the runtime itself.
type runtimeGenSizes struct {
	Index      int64    `json:"index"`
	Generation int      `json:"generation"`
	Concurrent bool     `json:"concurrent"`
	SizeBefore []uint64 `json:"sizeBeforeBytes"`
	SizeAfter  []uint64 `json:"sizeAfterBytes"`
	FragAfter  []uint64 `json:"fragmentationAfterBytes"`
}

// checkGenSizes compares each GC's per-generation sums (its
// GCPerHeapHistory events) with the runtime's own figures for the GCs the
// workload caught, and returns how many were compared and how many of
// those were background GCs.
func checkGenSizes(t *testing.T, gcs []*GC, rts []runtimeGenSizes) (compared, background int) {
	t.Helper()
	byNumber := make(map[uint32]*GC, len(gcs))
	for _, g := range gcs {
		byNumber[g.Number] = g
	}
	for _, rt := range rts {
		g := byNumber[uint32(rt.Index)]
		if g == nil {
			t.Errorf("the runtime described GC %d, not in the trace", rt.Index)
			continue
		}
		compared++
		if g.Type == clrevents.GCBackground {
			background++
		}
		// A background GC that ran whole inside its first stop (the
		// process's first, before its BGC thread exists) was a blocking
		// one for the runtime.
		if g.Generation != rt.Generation || (g.Type == clrevents.GCBackground && !g.rt.wholeStop) != rt.Concurrent {
			t.Errorf("GC %d: gen %d %v; the runtime's gen %d concurrent %v", g.Number, g.Generation, g.Type, rt.Generation, rt.Concurrent)
		}
		for i := range g.Gens {
			s := g.Gens[i]
			if s.SizeBefore != rt.SizeBefore[i] || s.SizeAfter != rt.SizeAfter[i] || s.Fragmentation != rt.FragAfter[i] {
				t.Errorf("GC %d (%s) gen %d: size before %d after %d fragmentation %d; the runtime's %d, %d, %d",
					g.Number, g.GenerationName(), i, s.SizeBefore, s.SizeAfter, s.Fragmentation, rt.SizeBefore[i], rt.SizeAfter[i], rt.FragAfter[i])
			}
		}
	}
	return compared, background
}

// TestBackgroundGCFixtureHeaps: gc-bgc (the bgcmix workload, concurrent
// workstation GC: background GCs with foreground GCs inside them and
// blocking ones right after) has the runtime's GCs, each with exactly one
// heap and its own per-generation sums: those of GC.GetGCMemoryInfo for
// every GC the workload caught, background GCs included. The monitor's
// configuration of the analysis (a few kept records, as the live views run
// it) gives every GC the same figures as the file's.
func TestBackgroundGCFixtureHeaps(t *testing.T) {
	const name = "gc-bgc.nettrace.gz"
	w := tracetest.Workload(t, "gc-bgc.nettrace")
	run := func(opts Options) *Result {
		r := tracetest.OpenFile(t, tracetest.Path(t, name), func(in io.Reader) (*nettrace.Reader, error) {
			z, err := gzip.NewReader(in)
			if err != nil {
				return nil, err
			}
			return nettrace.NewReader(z)
		})
		a := New(r.Header(), opts)
		if end := tracetest.ReadAll(t, r, a.Event); end != nil {
			t.Fatal(end)
		}
		res := a.Result()
		if err := res.CheckValid(); err != nil {
			t.Error(err)
		}
		return res
	}
	res := run(Options{})
	if res.Started != w.Gen0 || res.Complete != w.Gen0 || len(res.GCs) != w.Gen0 {
		t.Fatalf("started %d complete %d, %d records; the runtime counted %d GCs", res.Started, res.Complete, len(res.GCs), w.Gen0)
	}
	if byGen, want := [3]int{res.ByGen[0].Count, res.ByGen[1].Count, res.ByGen[2].Count}, tracetest.GCsByGeneration(w); byGen != want {
		t.Errorf("GCs by generation %v, the runtime counted %v", byGen, want)
	}
	// This recording's facts (testdata/traces/README.md).
	if res.ByType[clrevents.GCBackground] != 6 || res.ByType[clrevents.GCForeground] != 12 || res.ByType[clrevents.GCNonConcurrent] != 6 {
		t.Errorf("by type %v, want 6 Background, 12 Foreground, 6 NonConcurrent", res.ByType)
	}
	for i, g := range res.GCs {
		if g.Number != uint32(i+1) || !g.Complete || g.Heaps != 1 || g.NumHeaps != 1 || !g.HasPerHeap {
			t.Errorf("GC %d (%s): number %d complete %v, %d heap histories, global NumHeaps %d", i+1, g.GenerationName(), g.Number, g.Complete, g.Heaps, g.NumHeaps)
		}
	}
	var rts []runtimeGenSizes
	if err := w.Get("gcs", &rts); err != nil {
		t.Fatal(err)
	}
	compared, bgcs := checkGenSizes(t, res.GCs, rts)
	if compared != 21 || bgcs != 4 {
		t.Errorf("compared %d GCs (%d background) with the runtime's figures, want 21 (4)", compared, bgcs)
	}

	// The live views' configuration: few records kept, figures taken when
	// each GC is handed over (a background GC after the foreground GCs
	// that ran inside it).
	live := map[uint32]GC{}
	run(Options{KeepGCs: 8, KeepSuspensions: 8, OnGC: func(g *GC) { live[g.Number] = *g }})
	if len(live) != len(res.GCs) {
		t.Fatalf("live configuration handed over %d GCs, the file's has %d", len(live), len(res.GCs))
	}
	for _, f := range res.GCs {
		l := live[f.Number]
		if l.Number != f.Number || l.Heaps != f.Heaps || l.NumHeaps != f.NumHeaps || l.Gens != f.Gens || l.HeapStats != f.HeapStats {
			t.Errorf("GC %d: live %d heaps %v, file %d heaps %v", f.Number, l.Heaps, l.Gens, f.Heaps, f.Gens)
		}
	}
}

// For the live test (package gcpause_test, which may import report).
type RuntimeGenSizes = runtimeGenSizes

var CheckGenSizes = checkGenSizes
