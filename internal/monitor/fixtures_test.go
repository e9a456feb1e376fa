package monitor_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/internal/monitor"
	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/locks"
	"github.com/clrspy/clrspy/source"
)

// TestHistogramsEqualFile: every fixture read once by the file path's
// analyses and once through the monitor: the snapshot's pause and
// time-to-suspend histograms (all GCs and per generation), its counts and
// longest GC, and its lock-wait histogram are the analyses' own, equal to
// what a file's report renders (one histogram type, no monitor copy).
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
			g := &snap.GC
			if !reflect.DeepEqual(g.PauseHistogram, res.All.Histogram) || !reflect.DeepEqual(g.SuspendHistogram, res.All.SuspendHistogram) {
				t.Errorf("pause histogram live %v, file %v; suspend live %v, file %v", g.PauseHistogram.Counts, res.All.Histogram.Counts,
					g.SuspendHistogram.Counts, res.All.SuspendHistogram.Counts)
			}
			for i := range g.Generations {
				if !reflect.DeepEqual(g.Generations[i].PauseHistogram, res.ByGen[i].Histogram) || g.Generations[i].Count != res.ByGen[i].Count {
					t.Errorf("gen%d: live %d GCs %v, file %d %v", i, g.Generations[i].Count, g.Generations[i].PauseHistogram.Counts,
						res.ByGen[i].Count, res.ByGen[i].Histogram.Counts)
				}
			}
			if g.Count != res.Complete || (g.Longest == nil) != (len(res.Longest) == 0) || (g.Longest != nil && g.Longest.Number != res.Longest[0].Number) {
				t.Errorf("live %d GCs, longest %+v; file %d", g.Count, g.Longest, res.Complete)
			}
			lr := lk.Result()
			if !reflect.DeepEqual(snap.Locks.WaitHistogram, lr.Summary.WaitHistogram) || snap.Locks.WaitHistogram.Count != uint64(lr.Summary.Contentions) {
				t.Errorf("lock waits live %v, file %v (%d waits)", snap.Locks.WaitHistogram.Counts, lr.Summary.WaitHistogram.Counts, lr.Summary.Contentions)
			}
		})
	}
}
