package gcpause

import (
	"testing"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/source"
)

// stoppedObserver collects what a Set routes to it.
type stoppedObserver struct{ got []analysis.Stopped }

func (o *stoppedObserver) Event(*nettrace.Event)       {}
func (o *stoppedObserver) Stats() analysis.Stats       { return analysis.Stats{} }
func (o *stoppedObserver) Stopped(s *analysis.Stopped) { o.got = append(o.got, *s) }

// TestStoppedThroughSet: in an analysis.Set the pause analysis hands every
// ended suspension to the Set's StoppedObservers, paired once: on the
// gc-wks workload's trace (40 GCs, GC.CollectionCount(0)) every blocking
// GC's pause lies in a stopped interval, the intervals end in order, and
// none is left open at the end.
func TestStoppedThroughSet(t *testing.T) {
	st, err := source.Open(source.Spec{File: "../testdata/traces/gc-wks.nettrace"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s := analysis.NewSet()
	gc := analysis.Add(s, Spec, func(h *nettrace.Header) *Analyzer { return New(h, Options{}) })
	obs := analysis.Add(s, analysis.Spec{Name: "observer"}, func(*nettrace.Header) *stoppedObserver { return &stoppedObserver{} })
	s.Start(st.Header())
	if _, err := st.Run(s); err != nil {
		t.Fatal(err)
	}
	got := obs.Get().got
	gcs := map[uint32]bool{}
	for i, x := range got {
		if x.EndNanos < x.BeginNanos || i > 0 && x.EndNanos < got[i-1].EndNanos {
			t.Errorf("stopped %+v ends before it begins or before the one before it", x)
		}
		if x.GC != 0 && clrevents.SuspendReason(x.Reason).IsGC() {
			gcs[x.GC] = true
		}
	}
	// A GC that starts inside another's stop (the ephemeral GC of a
	// background GC's initial stop) shares that stop: the stop names the
	// first GC in it. Every blocking GC's pause lies in one interval.
	r := gc.Get().Result()
	blocking := 0
	for _, g := range r.GCs {
		if g.Type == clrevents.GCBackground || !g.Complete {
			continue
		}
		blocking++
		in := false
		for _, x := range got {
			in = in || x.BeginNanos <= g.PauseStartNanos && g.PauseEndNanos <= x.EndNanos
		}
		if !in {
			t.Errorf("GC %d's pause %d..%d ns is in no stopped interval", g.Number, g.PauseStartNanos, g.PauseEndNanos)
		}
	}
	if len(r.GCs) != 40 || blocking == 0 || len(gcs) < blocking {
		t.Errorf("%d GCs (want the workload's 40), %d blocking, %d named by a stopped interval", len(r.GCs), blocking, len(gcs))
	}
	if o := gc.Get().OpenSince(false); o != -1 || gc.Get().Open() != 0 {
		t.Errorf("open at the end: since %d, %d open", o, gc.Get().Open())
	}
}
