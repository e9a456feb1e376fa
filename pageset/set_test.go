package pageset

import (
	"testing"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/source"
	"github.com/clrspy/clrspy/stacks"
	"github.com/clrspy/clrspy/triage"
)

// TestPageAndTriageShareOneSet: `clrspy report` runs the page's analyses
// and triage's in one analysis.Set: one symbol table, one pause analysis,
// so triage adds no GCStart decode to the page's (the page's pause
// analysis, the heap tracker until it gives up and the snapshot builder
// decode GCStart; triage had its own pause analysis), and triage's GC
// count is the page's. The composite workload's trace
// (testdata/traces/README.md).
func TestPageAndTriageShareOneSet(t *testing.T) {
	run := func(withTriage bool) (decodes, starts int, an *Analyses, tri *triage.Analyzer) {
		st, err := source.Open(source.Spec{File: "../testdata/traces/composite.nettrace"})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		s := analysis.NewSet()
		an = Register(s, Options{})
		if withTriage {
			tri = triage.Register(s, triage.Options{Target: "composite", NoProfile: true, Uncounted: true})
		}
		s.Start(st.Header())
		var gcs, syms int
		for _, a := range s.Analyzers() {
			switch a.(type) {
			case *gcpause.Analyzer:
				gcs++
			case *stacks.Symbols:
				syms++
			}
		}
		if gcs != 1 || syms != 1 || tri != nil && tri.Symbols() != an.Symbols {
			t.Fatalf("%d pause analyses, %d symbol tables; want one each, shared", gcs, syms)
		}
		before := clrevents.GCStartDecodes()
		for {
			ev, err := st.Next()
			if err != nil {
				break
			}
			if ev.Meta.Runtime == nettrace.Runtime && ev.Meta.EventID == clrevents.IDGCStart {
				starts++
			}
			s.Event(ev)
		}
		s.Finish()
		return int(clrevents.GCStartDecodes() - before), starts, an, tri
	}
	alone, starts, _, _ := run(false)
	both, _, an, tri := run(true)
	if both != alone || starts == 0 {
		t.Errorf("%d GCStart decodes with triage, %d without, for %d GCStart events: triage must add none", both, alone, starts)
	}
	if f, r := tri.Facts(), an.GC.Result(); f.GC.Count != r.All.Count || r.All.Count != starts {
		t.Errorf("triage counts %d GCs, the page %d, the stream has %d GCStarts", f.GC.Count, r.All.Count, starts)
	}
}
