package monitor_test

import (
	"compress/gzip"
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/internal/monitor"
	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/locks"
	"github.com/clrspy/clrspy/report"
	"github.com/clrspy/clrspy/source"
)

// TestHistogramsEqualFile: every fixture read once by the file path's
// analyses and once through the monitor: the snapshot's pause and
// time-to-suspend histograms (all GCs and per generation), its counts and
// longest GC, and its lock-wait histogram are the analyses' own, equal to
// what a file's report renders (one histogram type, no monitor copy); and
// its suspensions by reason are gcpause's rows, equal to the file's and
// written as the same JSON as clrspy gc --json's summary.
func TestHistogramsEqualFile(t *testing.T) {
	for _, name := range tracetest.Fixtures(t) {
		if strings.HasSuffix(name, ".truncated.nettrace") {
			continue
		}
		t.Run(name, func(t *testing.T) {
			st, err := source.Open(source.Spec{File: tracetest.Path(t, name)})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			gc := gcpause.New(st.Header(), gcpause.Options{})
			lk := locks.New(st.Header(), locks.Options{})
			m := monitor.New(st.Header(), monitor.Options{Locks: true})
			if _, err := st.Run(gc, lk, m); err != nil {
				t.Fatal(err)
			}
			res, snap := gc.Result(), m.Snapshot()
			if err := snap.CheckValid(); err != nil {
				t.Errorf("snapshot: %v", err)
			}
			g := &snap.GC
			if !reflect.DeepEqual(g.PauseHistogram, res.All.Histogram) || !reflect.DeepEqual(g.SuspendHistogram, res.All.SuspendHistogram) {
				t.Errorf("pause histogram live %v, file %v; suspend live %v, file %v", g.PauseHistogram.Counts, res.All.Histogram.Counts,
					g.SuspendHistogram.Counts, res.All.SuspendHistogram.Counts)
			}
			for i := range g.GenPauseHistograms {
				if !reflect.DeepEqual(g.GenPauseHistograms[i], res.ByGen[i].Histogram) || g.Gen(i).Count != res.ByGen[i].Count {
					t.Errorf("gen%d: live %d GCs %v, file %d %v", i, g.Gen(i).Count, g.GenPauseHistograms[i].Counts,
						res.ByGen[i].Count, res.ByGen[i].Histogram.Counts)
				}
			}
			// One row type on both paths: the snapshot's rows (the latest
			// ones kept) are clrspy gc --json's, compared as values.
			doc := report.NewGCDocument(report.Input{}, res)
			if n := len(snap.Suspensions); n > len(doc.Suspensions) || !reflect.DeepEqual(snap.Suspensions, doc.Suspensions[len(doc.Suspensions)-n:]) {
				t.Errorf("suspension rows:\nlive %+v\nfile %+v", snap.Suspensions, doc.Suspensions)
			}
			t.Logf("%d live suspension rows, %d GC rows checked", len(snap.Suspensions), len(snap.GCs))
			fileGCs := map[uint32]gcpause.GCRow{}
			for _, r := range doc.GCs {
				fileGCs[r.Number] = r
			}
			for _, r := range snap.GCs {
				if want, ok := fileGCs[r.Number]; !ok || !reflect.DeepEqual(r, want) {
					t.Errorf("GC %d:\nlive %+v\nfile %+v", r.Number, r, want)
					break
				}
			}
			// One summary type on both paths: the live one is the file's.
			if want := gcpause.NewSummary(res); !reflect.DeepEqual(g.Summary, want) {
				t.Errorf("summary:\nlive %+v\nfile %+v", g.Summary, want)
			}
			if g.GCCount != res.Complete || (g.Longest == nil) != (len(res.Longest) == 0) || (g.Longest != nil && g.Longest.Number != res.Longest[0].Number) {
				t.Errorf("live %d GCs, longest %+v; file %d", g.GCCount, g.Longest, res.Complete)
			}
			if !slices.Equal(g.SuspensionsByReason, res.ByReason) {
				t.Errorf("suspensions by reason:\nlive %+v\nfile %+v", g.SuspensionsByReason, res.ByReason)
			}
			lj, _ := json.Marshal(g.SuspensionsByReason)
			fj, _ := json.Marshal(gcpause.NewSummary(res).SuspensionsByReason)
			if string(lj) != string(fj) {
				t.Errorf("suspensions by reason JSON:\nlive %s\nfile %s", lj, fj)
			}
			lr := lk.Result()
			if !reflect.DeepEqual(snap.Locks.WaitHistogram, lr.Summary.WaitHistogram) || snap.Locks.WaitHistogram.Count != uint64(lr.Summary.Contentions) {
				t.Errorf("lock waits live %v, file %v (%d waits)", snap.Locks.WaitHistogram.Counts, lr.Summary.WaitHistogram.Counts, lr.Summary.Contentions)
			}
		})
	}
}

// TestFlavorHeapsFromRows: the GC flavour's heap count (the terminal
// view's "server (N heaps)", the kind's "heap_count" evidence) is that of
// gcpause's row of the last GC that reported heaps, the count the file's
// page shows for that GC: the monitor reads no heap history itself, so a
// background GC's history written inside a foreground GC's pause
// (gc-bgc-attach) cannot make the live line say other than the file's.
func TestFlavorHeapsFromRows(t *testing.T) {
	for _, c := range []struct {
		name, kind string
		heaps      int // every row's
	}{
		{"gc-wks.nettrace", "workstation", 1},
		{"gc-bgc.nettrace.gz", "workstation", 1},
		{"gc-bgc-attach.nettrace.gz", "workstation", 1},
		{"gc-server.nettrace", "server", 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			spec := source.Spec{File: tracetest.Path(t, c.name)}
			if strings.HasSuffix(c.name, ".gz") {
				f, err := os.Open(spec.File)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				z, err := gzip.NewReader(f)
				if err != nil {
					t.Fatal(err)
				}
				spec = source.Spec{File: "-", Stdin: z}
			}
			st, err := source.Open(spec)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			last, most := 0, 0
			gc := gcpause.New(st.Header(), gcpause.Options{OnGC: func(g *gcpause.GC) {
				if g.HasPerHeap {
					last, most = g.Heaps, max(most, g.Heaps)
				}
			}})
			m := monitor.New(st.Header(), monitor.Options{})
			if _, err := st.Run(gc, m); err != nil {
				t.Fatal(err)
			}
			if err := gc.Result().CheckValid(); err != nil {
				t.Fatal(err)
			}
			f := m.Snapshot().Process.GC
			t.Logf("%s: %s, %d heaps (file rows: last %d, most %d)", c.name, f.Kind, f.Heaps, last, most)
			if f.Heaps != last || f.Kind != c.kind || (c.heaps > 0 && (last != c.heaps || most != c.heaps)) {
				t.Errorf("live flavour %s with %d heaps; file rows: last %d, most %d; want %s, %d", f.Kind, f.Heaps, last, most, c.kind, c.heaps)
			}
		})
	}
}
