package analysis_test

import (
	"reflect"
	"slices"
	"testing"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/ipc"
	"github.com/clrspy/clrspy/locks"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/source"
	"github.com/clrspy/clrspy/stacks"
)

// counter counts the events it is fed and records the order it saw them
// in (into a log shared by the Set's analyses).
type counter struct {
	name    string
	log     *[]string
	n       uint64
	stopped []analysis.Stopped
}

func (c *counter) Event(*nettrace.Event) {
	c.n++
	if len(*c.log) < 8 {
		*c.log = append(*c.log, c.name)
	}
}
func (c *counter) Stats() analysis.Stats       { return analysis.Stats{Events: c.n} }
func (c *counter) Stopped(s *analysis.Stopped) { c.stopped = append(c.stopped, *s) }

// TestSet: one symbol table however many analyses ask for it, fed first;
// providers merged from what the analyses read; Keep nil once one of them
// reads everything; the stats of uncounted analyses left out.
func TestSet(t *testing.T) {
	s := analysis.NewSet()
	sym := stacks.SymbolsIn(s)
	if again := stacks.SymbolsIn(s); again != sym {
		t.Fatal("SymbolsIn registered a second symbol table")
	}
	var log []string
	a := analysis.Add(s, analysis.Spec{Name: "a", Keep: gcpause.Wants}, func(*nettrace.Header) *counter { return &counter{name: "a", log: &log} })
	b := analysis.Add(s, analysis.Spec{Name: "b", Keep: locks.Wants, Enable: []func(*nettrace.Metadata) bool{locks.WantsContention},
		Providers: []ipc.Provider{ipc.SampleProfiler}, Uncounted: true}, func(*nettrace.Header) *counter { return &counter{name: "b", log: &log} })
	if got, want := s.Names(), []string{"symbols", "a", "b"}; !slices.Equal(got, want) {
		t.Errorf("Names = %v, want %v", got, want)
	}
	want := append(clrevents.ProvidersFor(stacks.SymbolsWant, gcpause.Wants, locks.WantsContention), ipc.SampleProfiler)
	if got := s.Providers(); !reflect.DeepEqual(got, want) {
		t.Errorf("Providers = %+v, want %+v", got, want)
	}
	keep := s.Keep()
	gcStart := &nettrace.Metadata{Runtime: nettrace.Runtime, EventID: clrevents.IDGCStart}
	sample := &nettrace.Metadata{Runtime: nettrace.SampleProfiler, EventID: clrevents.IDThreadSample}
	if keep == nil || !keep(gcStart) || keep(sample) {
		t.Errorf("Keep: GCStart kept %v, a stack sample kept %v; want true, false", keep != nil && keep(gcStart), keep != nil && keep(sample))
	}

	st, err := source.Open(source.Spec{File: "../testdata/traces/gc-wks.nettrace", Keep: keep})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s.Start(st.Header())
	if sym.Get() == nil || a.Get() == nil || b.Get() == nil {
		t.Fatal("Start left an analysis uncreated")
	}
	end, err := st.Run(s)
	if err != nil {
		t.Fatal(err)
	}
	delivered := end.Events - end.Skipped
	if a.Get().n != delivered || b.Get().n != delivered {
		t.Errorf("fed a %d and b %d events, want %d each", a.Get().n, b.Get().n, delivered)
	}
	if len(log) < 2 || log[0] != "a" || log[1] != "b" {
		t.Errorf("order %v, want a before b", log)
	}
	if got, want := s.Stats().Events, delivered+sym.Get().Stats().Events; got != want {
		t.Errorf("Set.Stats().Events = %d, want %d (b is uncounted)", got, want)
	}
	unkept := analysis.NewSet()
	analysis.Add(unkept, analysis.Spec{Name: "all"}, func(*nettrace.Header) *counter { return &counter{log: &log} })
	if unkept.Keep() != nil {
		t.Error("Keep is not nil with an analysis that reads every event")
	}
}
