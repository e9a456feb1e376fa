package gcpause_test

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/internal/web"
	"github.com/clrspy/clrspy/internal/workload"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/report"
	"github.com/clrspy/clrspy/source"
)

// bgcRun is one bgcmix run followed live with the report page's providers
// (the sample profiler's 1 kHz suspensions included), as the live page
// follows it: the GCs as the live views get them, the page's GC columns,
// and the same stream (the session's bytes, teed) read back as a file.
type bgcRun struct {
	live map[uint32]gcpause.GC
	page report.GCColumns
	file *gcpause.Result
}

func followBGC(t *testing.T, spec source.Spec) *bgcRun {
	t.Helper()
	var tee bytes.Buffer
	spec.Providers, spec.Tee = web.PageProviders(false), &tee
	st, err := source.Open(spec)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r := &bgcRun{live: map[uint32]gcpause.GC{}}
	// As the monitor runs it: few records kept, each GC read when handed over.
	a := gcpause.New(st.Header(), gcpause.Options{MaxGCs: 8, MaxSuspensions: 8, OnGC: func(g *gcpause.GC) {
		r.live[g.Number] = *g
		row := gcpause.NewGCRow(g)
		r.page.Append(&row)
	}})
	readAll(t, st.Next, a.Event)
	a.Result()
	st.Close()

	fr, err := nettrace.NewReader(bytes.NewReader(tee.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	fa := gcpause.New(fr.Header(), gcpause.Options{})
	readAll(t, fr.Next, fa.Event)
	r.file = fa.Result()
	return r
}

func readAll(t *testing.T, next func() (*nettrace.Event, error), fn func(*nettrace.Event)) {
	t.Helper()
	for {
		ev, err := next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
			return
		}
		fn(ev)
	}
}

// check: live and from the file every GC has one heap (the page's heap
// column says 1) and the same per-generation sums, and those are the
// runtime's own (GC.GetGCMemoryInfo of the GCs the workload caught). It
// returns the number of GCs.
func (r *bgcRun) check(t *testing.T, w *workload.Result) int {
	t.Helper()
	f := r.file
	if len(f.GCs) == 0 || len(r.live) != len(f.GCs) || f.Complete != len(f.GCs) || f.GCs[len(f.GCs)-1].Number != uint32(w.Gen0) {
		t.Fatalf("live %d GCs, file %d (%d complete); the runtime counted %d", len(r.live), len(f.GCs), f.Complete, w.Gen0)
	}
	if f.ByType[clrevents.GCBackground] < 1 || f.ByType[clrevents.GCForeground] < 1 {
		t.Fatalf("by type %v: the run needs background GCs with foreground GCs in them", f.ByType)
	}
	if n := slices.Max(r.page.Heaps); n != 1 {
		t.Errorf("the page's heap count (most heaps of a GC) is %d, want 1", n)
	}
	for _, g := range f.GCs {
		l := r.live[g.Number]
		if l.Number != g.Number || l.Heaps != 1 || g.Heaps != 1 || l.NumHeaps != 1 || g.NumHeaps != 1 || l.Gens != g.Gens || l.HeapStats != g.HeapStats {
			t.Errorf("GC %d (%s): live %d heaps (global %d) %v; file %d heaps (global %d) %v",
				g.Number, g.GenerationName(), l.Heaps, l.NumHeaps, l.Gens, g.Heaps, g.NumHeaps, g.Gens)
		}
	}
	var rts []gcpause.RuntimeGenSizes
	if err := w.Get("gcs", &rts); err != nil {
		t.Fatal(err)
	}
	// The workload reads GC.GetGCMemoryInfo between steps: it catches most
	// GCs (24 of 25, 28 of 30 measured), not all: a GC that follows
	// another before the next step hides it.
	compared, bgcs := gcpause.CheckGenSizes(t, f.GCs, rts)
	if compared < len(f.GCs)/2 {
		t.Errorf("compared %d of %d GCs (%d background) with the runtime's figures", compared, len(f.GCs), bgcs)
	}
	t.Logf("%d GCs (%v), %d compared with GCMemoryInfo (%d background)", len(f.GCs), f.ByType, compared, bgcs)
	return len(f.GCs)
}

// TestBackgroundGCHeapsLive: a workstation, concurrent-GC process that
// makes background GCs with foreground GCs inside them and blocking ones
// right after (the bgcmix workload), launched under the live page's
// session: every GC of the run, one heap each, the same sums live and from
// the file, and the runtime's. How many GCs of each kind the run makes
// depends on the load: 3 to 13 BGCs and 12 to 30 foreground GCs in 3 s
// measured here.
func TestBackgroundGCHeapsLive(t *testing.T) {
	var out bytes.Buffer
	t.Setenv("DOTNET_gcServer", "0")
	t.Setenv("DOTNET_gcConcurrent", "1")
	r := followBGC(t, source.Spec{Argv: workload.Argv(t, "bgcmix", "seconds=3", "everyMs=20"), ProgramStdout: &out, ProgramStderr: io.Discard})
	w, err := workload.ParseResult(out.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if n := r.check(t, w); n != w.Gen0 {
		t.Errorf("%d GCs, the runtime counted %d", n, w.Gen0)
	}
}

// TestBackgroundGCHeapsAttached: the same workload with the live page
// attached while it runs, as a user opens the page on a running service.
// The session begins in the middle of the run, often inside a background
// GC whose start it did not see; that BGC's heap histories, written on its
// own thread while a foreground GC of the session restarts the program
// (gc-bgc-attach has one such), gave that GC two heaps and the page said
// "2 heaps" (issue 26: 1 attach in 2 and 1 recording in 5 hit it here).
// Whether a run hits the window is timing; the test holds either way.
func TestBackgroundGCHeapsAttached(t *testing.T) {
	env := []string{"DOTNET_gcServer=0", "DOTNET_gcConcurrent=1"}
	p := workload.Start(t, env, "bgcmix", "seconds=4", "everyMs=20")
	// The graph is built and aged in about half a second; attach once BGCs
	// run.
	time.Sleep(time.Second)
	r := followBGC(t, source.Spec{Pid: p.Pid})
	w, err := p.Wait(30 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if n := r.check(t, w); n < 5 || r.file.GCs[0].Number < 2 {
		t.Errorf("%d GCs from GC %d: the session should begin inside the run", n, r.file.GCs[0].Number)
	}
}
