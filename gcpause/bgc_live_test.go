package gcpause_test

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"testing"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/internal/workload"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/report"
	"github.com/clrspy/clrspy/source"
)

// TestBackgroundGCHeapsLive: a workstation, concurrent-GC process that
// makes background GCs with foreground GCs inside them and blocking ones
// right after (the bgcmix workload), followed live with the report page's
// providers (the sample profiler's 1 kHz suspensions included) as the
// live page follows it, and the same stream (the session's bytes, teed)
// read back as a file. Live and from the file every GC has one heap (the
// page's heap column says 1) and the same per-generation sums, and those
// are the runtime's own (GC.GetGCMemoryInfo of every GC the workload
// caught). How many GCs of each kind the run makes depends on the load;
// the run is long enough for a few background GCs with foreground GCs
// (3 to 13 BGCs and 12 to 30 foreground GCs in 3 s measured here).
func TestBackgroundGCHeapsLive(t *testing.T) {
	var tee, out bytes.Buffer
	t.Setenv("DOTNET_gcServer", "0")
	t.Setenv("DOTNET_gcConcurrent", "1")
	st, err := source.Open(source.Spec{
		Argv:      workload.Argv(t, "bgcmix", "seconds=3", "everyMs=20"),
		Providers: report.PageProviders(false),
		Tee:       &tee, ProgramStdout: &out, ProgramStderr: io.Discard,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	live := map[uint32]gcpause.GC{}
	var page report.GCColumns
	// As the monitor runs it: few records kept, each GC read when handed over.
	a := gcpause.New(st.Header(), gcpause.Options{KeepGCs: 8, KeepSuspensions: 8, OnGC: func(g *gcpause.GC) {
		live[g.Number] = *g
		page.Append(g)
	}})
	for {
		ev, err := st.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
			break
		}
		a.Event(ev)
	}
	a.Result()
	st.Close()

	r, err := nettrace.NewReader(bytes.NewReader(tee.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	fa := gcpause.New(r.Header(), gcpause.Options{})
	for {
		ev, err := r.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
			break
		}
		fa.Event(ev)
	}
	file := fa.Result()
	w, err := workload.ParseResult(out.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if len(live) != w.Gen0 || len(file.GCs) != w.Gen0 || file.Complete != w.Gen0 {
		t.Fatalf("live %d GCs, file %d (%d complete); the runtime counted %d", len(live), len(file.GCs), file.Complete, w.Gen0)
	}
	if file.ByType[clrevents.GCBackground] < 2 || file.ByType[clrevents.GCForeground] < 1 {
		t.Fatalf("by type %v: the run needs background GCs with foreground GCs in them", file.ByType)
	}
	if n := slices.Max(page.Heaps); n != 1 {
		t.Errorf("the page's heap count (most heaps of a GC) is %d, want 1", n)
	}
	for _, f := range file.GCs {
		l := live[f.Number]
		if l.Number != f.Number || l.Heaps != 1 || f.Heaps != 1 || l.NumHeaps != 1 || f.NumHeaps != 1 || l.Gens != f.Gens || l.HeapStats != f.HeapStats {
			t.Errorf("GC %d (%s): live %d heaps (global %d) %v; file %d heaps (global %d) %v",
				f.Number, f.GenerationName(), l.Heaps, l.NumHeaps, l.Gens, f.Heaps, f.NumHeaps, f.Gens)
		}
	}
	var rts []gcpause.RuntimeGenSizes
	if err := w.Get("gcs", &rts); err != nil {
		t.Fatal(err)
	}
	// The workload reads GC.GetGCMemoryInfo between steps: it catches most
	// GCs, not all (a BGC ending while another GC follows is overwritten).
	compared, bgcs := gcpause.CheckGenSizes(t, file.GCs, rts)
	if compared < w.Gen0/2 || bgcs < 1 {
		t.Errorf("compared %d of %d GCs (%d background) with the runtime's figures", compared, w.Gen0, bgcs)
	}
	t.Logf("%d GCs (%v), %d compared with GCMemoryInfo (%d background)", w.Gen0, file.ByType, compared, bgcs)
}
