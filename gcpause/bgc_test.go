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
// workload caught (those from the trace's first GC on: an attached
// session misses the earlier ones), and returns how many were compared and
// how many of those were background GCs.
func checkGenSizes(t *testing.T, gcs []*GC, rts []runtimeGenSizes) (compared, background int) {
	t.Helper()
	byNumber := make(map[uint32]*GC, len(gcs))
	for _, g := range gcs {
		byNumber[g.Number] = g
	}
	for _, rt := range rts {
		if len(gcs) == 0 || rt.Index < int64(gcs[0].Number) {
			continue
		}
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
	run := func(opts Options) *Result { return analyzeGz(t, name, opts) }
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
	run(Options{MaxGCs: 8, MaxSuspensions: 8, OnGC: func(g *GC) { live[g.Number] = *g }})
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

// analyzeGz runs the gzipped fixture name through an Analyzer.
func analyzeGz(t *testing.T, name string, opts Options) *Result {
	t.Helper()
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

// TestBackgroundGCAttachedHeaps: gc-bgc-attach, a session with the live
// page's providers (the sample profiler on) attached to bgcmix while its
// background GC 7 was sweeping. Foreground GC 11, the first GC of the
// session, ran in that sweep; BGC 7 wrote its GlobalHeapHistory and
// PerHeapHistory on its own thread while GC 11 was restarting the program
// (2.2 ms after GC 11's RestartEEBegin, 1.4 ms before its RestartEEEnd),
// after GC 11's HeapStats. They are not GC 11's: every GC has one heap, and
// GC 11's sums are the runtime's own (issue 26: GC 11 had two heaps and
// every size doubled, the live page said "2 heaps"). BGC 7 began before the
// session: its histories and HeapStats belong to no GC here.
func TestBackgroundGCAttachedHeaps(t *testing.T) {
	const name = "gc-bgc-attach.nettrace.gz"
	w := tracetest.Workload(t, "gc-bgc-attach.nettrace")
	res := analyzeGz(t, name, Options{})
	if len(res.GCs) != 25 || res.GCs[0].Number != 11 || res.Complete != 25 || w.Gen0 != 35 {
		t.Fatalf("%d GCs from %d, %d complete; the runtime counted %d in all", len(res.GCs), res.GCs[0].Number, res.Complete, w.Gen0)
	}
	for i, g := range res.GCs {
		if g.Number != uint32(11+i) || !g.Complete || g.Heaps != 1 || g.NumHeaps != 1 {
			t.Errorf("GC %d (%s): number %d complete %v, %d heap histories, global NumHeaps %d", 11+i, g.GenerationName(), g.Number, g.Complete, g.Heaps, g.NumHeaps)
		}
	}
	if g := res.GCs[0]; g.Type != clrevents.GCForeground || g.Gens[2].SizeBefore != 61107176 {
		t.Errorf("GC 11: %v, gen2 size before %d", g.Type, g.Gens[2].SizeBefore)
	}
	var rts []runtimeGenSizes
	if err := w.Get("gcs", &rts); err != nil {
		t.Fatal(err)
	}
	compared, bgcs := checkGenSizes(t, res.GCs, rts)
	if compared != 24 || bgcs != 4 {
		t.Errorf("compared %d GCs (%d background) with the runtime's figures, want 24 (4)", compared, bgcs)
	}
}

// For the live test (package gcpause_test, which may import report).
type RuntimeGenSizes = runtimeGenSizes

var CheckGenSizes = checkGenSizes

// TestBackgroundGCHistoriesInsideForegroundGC: a background GC writes its
// GlobalHeapHistory and PerHeapHistory on its own thread at the end of its
// sweep, with no GC number, and foreground GCs run during that sweep (on
// gc-bgc, GC 11 runs in BGC 8's sweep, after its final-mark stop, and BGC
// 8 writes its histories 8 ms after GC 11 restarted the program). Here the
// same events are replayed with those histories moved inside GC 11's
// pause (after its HeapStats, before its RestartEE), as a BGC thread that
// is not held back by the foreground GC would write them. The foreground GC keeps one heap and
// its own sums, the BGC gets its own: every GC's figures are those of the
// unmodified stream (issue 26: the foreground GC got two heaps, its sums
// doubled).
func TestBackgroundGCHistoriesInsideForegroundGC(t *testing.T) {
	r := tracetest.OpenFile(t, tracetest.Path(t, "gc-bgc.nettrace.gz"), func(in io.Reader) (*nettrace.Reader, error) {
		z, err := gzip.NewReader(in)
		if err != nil {
			return nil, err
		}
		return nettrace.NewReader(z)
	})
	var evs []nettrace.Event
	if end := tracetest.ReadAll(t, r, func(ev *nettrace.Event) {
		c := *ev
		c.Payload = append([]byte(nil), ev.Payload...)
		c.Stack = append([]uint64(nil), ev.Stack...)
		evs = append(evs, c)
	}); end != nil {
		t.Fatal(end)
	}
	analyze := func(evs []nettrace.Event) *Result {
		a := New(r.Header(), Options{})
		for i := range evs {
			a.Event(&evs[i])
		}
		return a.Result()
	}
	want := analyze(evs)

	// Find, in stream order, a BGC, the last foreground GC before its end,
	// that GC's HeapStats, and the BGC's two histories (on another thread).
	id := func(ev *nettrace.Event) uint32 {
		if ev.Meta.Runtime != nettrace.Runtime {
			return 0
		}
		return ev.Meta.EventID
	}
	var fgStats, global, perHeap int
	var fgThread, bgc uint64
	var fgNumber uint32
	prep := false // the BGC made its final-mark stop: it is sweeping
	for i := range evs {
		ev := &evs[i]
		switch id(ev) {
		case clrevents.IDGCSuspendEEBegin:
			e, err := clrevents.DecodeGCSuspendEEBegin(ev.Payload, ev.Meta.Version, r.Header().PointerSize)
			if err != nil {
				t.Fatal(err)
			}
			if e.Reason == clrevents.SuspendForGCPrep {
				prep, fgStats = true, 0
			}
		case clrevents.IDGCStart:
			e, err := clrevents.DecodeGCStart(ev.Payload, ev.Meta.Version, r.Header().PointerSize)
			if err != nil {
				t.Fatal(err)
			}
			if e.Type == clrevents.GCForeground && prep {
				fgThread, fgNumber, fgStats = ev.ThreadID, e.Count, 0
			}
		case clrevents.IDGCHeapStats:
			if ev.ThreadID == fgThread && fgStats == 0 {
				fgStats = i
			}
		case clrevents.IDGCGlobalHeapHistory:
			if fgStats != 0 && ev.ThreadID != fgThread {
				global, bgc = i, ev.ThreadID
			} else if ev.ThreadID != fgThread {
				prep = false // a BGC ended with no foreground GC in its sweep
			}
		case clrevents.IDGCPerHeapHistory:
			if global != 0 && ev.ThreadID == bgc {
				perHeap = i
			}
		}
		if perHeap != 0 {
			break
		}
	}
	if perHeap != global+1 || fgStats == 0 {
		t.Fatalf("no BGC histories after a foreground GC (HeapStats at %d, BGC histories at %d, %d)", fgStats, global, perHeap)
	}
	moved := make([]nettrace.Event, 0, len(evs))
	moved = append(moved, evs[:fgStats+1]...)
	for _, i := range []int{global, perHeap} {
		ev := evs[i]
		ev.Timestamp = evs[fgStats].Timestamp + 1
		moved = append(moved, ev)
	}
	moved = append(moved, evs[fgStats+1:global]...)
	moved = append(moved, evs[perHeap+1:]...)

	got := analyze(moved)
	if len(got.GCs) != len(want.GCs) {
		t.Fatalf("%d GCs, want %d", len(got.GCs), len(want.GCs))
	}
	for i, g := range got.GCs {
		w := want.GCs[i]
		if g.Heaps != 1 || g.NumHeaps != w.NumHeaps || g.Gens != w.Gens || g.HeapStats != w.HeapStats || g.Complete != w.Complete {
			t.Errorf("GC %d (%s; the foreground GC is %d): %d heaps (global %d) %v, want 1 (%d) %v",
				g.Number, g.GenerationName(), fgNumber, g.Heaps, g.NumHeaps, g.Gens, w.NumHeaps, w.Gens)
		}
	}
}
