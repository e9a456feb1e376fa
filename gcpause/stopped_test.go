package gcpause

import (
	"testing"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/internal/tracetest"
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

// TestOnStopped: on gc-induced.nettrace (blocking GCs only) every GC's
// pause is exactly one Stopped carrying its number, from its
// SuspendEEBegin to its RestartEEEnd, and the Stopped intervals are in
// order and never inverted.
func TestOnStopped(t *testing.T) {
	var got []analysis.Stopped
	res, _, end := analyzeFile(t, tracetest.Path(t, "gc-induced.nettrace"),
		Options{OnStopped: func(s *analysis.Stopped) { got = append(got, *s) }})
	if end != nil {
		t.Fatal(end)
	}
	byGC := map[uint32][]analysis.Stopped{}
	var last int64
	for _, s := range got {
		if s.EndNanos < s.BeginNanos || s.EndNanos < last {
			t.Errorf("stopped out of order: %+v (previous end %d)", s, last)
		}
		last = s.EndNanos
		if s.GC != 0 {
			byGC[s.GC] = append(byGC[s.GC], s)
		}
	}
	if len(res.GCs) == 0 {
		t.Fatal("no GCs")
	}
	for _, g := range res.GCs {
		st := byGC[g.Number]
		if len(st) != 1 {
			t.Errorf("GC %d: %d Stopped, want 1", g.Number, len(st))
			continue
		}
		if st[0].BeginNanos != g.PauseStartNanos || st[0].EndNanos != g.PauseEndNanos {
			t.Errorf("GC %d: Stopped %d..%d, GC pause %d..%d", g.Number, st[0].BeginNanos, st[0].EndNanos, g.PauseStartNanos, g.PauseEndNanos)
		}
	}
	if len(byGC) != len(res.GCs) {
		t.Errorf("Stopped name %d GCs, the result has %d", len(byGC), len(res.GCs))
	}
}
