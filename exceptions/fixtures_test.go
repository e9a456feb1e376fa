package exceptions

import (
	"compress/gzip"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/stacks"
)

// fixture is testdata/traces/exceptions.nettrace.gz: the throws workload,
// two threads, 40 rounds each, recorded by clrspy record (.NET 10).
const fixture = "exceptions.nettrace.gz"

// replay runs the analysis over a gzipped fixture with its symbols.
func replay(t *testing.T, name string, opts Options) *Result {
	t.Helper()
	r := tracetest.OpenFile(t, tracetest.Path(t, name), func(in io.Reader) (*nettrace.Reader, error) {
		z, err := gzip.NewReader(in)
		if err != nil {
			return nil, err
		}
		return nettrace.NewReader(z)
	})
	sym := stacks.NewSymbols(r.Header())
	opts.Symbols = sym
	a := New(r.Header(), opts)
	if err := tracetest.ReadAll(t, r, func(ev *nettrace.Event) {
		a.Event(ev)
		sym.Event(ev)
	}); err != nil {
		t.Fatal(err)
	}
	res := a.Result()
	if err := res.CheckValid(); err != nil {
		t.Errorf("%s: %v", name, err)
	}
	return res
}

// TestExceptionsFixture checks every figure of the recorded throws run
// against what the workload did: counts per type, one message pattern per
// type, the throw and catch sites by name, every exception caught, the
// finally and filter runs.
func TestExceptionsFixture(t *testing.T) {
	w := tracetest.Workload(t, "exceptions.nettrace")
	var counts map[string]int64
	var throwSites, catchSites map[string]string
	if err := errors.Join(w.Get("counts", &counts), w.Get("throwSites", &throwSites), w.Get("catchSites", &catchSites)); err != nil {
		t.Fatal(err)
	}
	res := replay(t, fixture, Options{})
	// The recording: 80 + 40 + 20 + 20.
	if res.Thrown != 160 || res.Caught != 160 || res.Uncaught != 0 || res.Open != 0 || res.Rethrown != 0 ||
		res.Finallys != w.Int("finallys") || res.Filters != w.Int("filters") || !res.HandlingEvents ||
		res.CatchesWithoutThrow != 0 || res.StopsWithoutThrow != 0 || res.DecodeErrors != 0 {
		t.Fatalf("result %+v", *res)
	}
	patterns := map[string]string{
		"System.InvalidOperationException":                "order <n> not found",
		"System.ArgumentException":                        "bad token at <hex>",
		"System.TimeoutException":                         "request <guid> timed out",
		"System.Collections.Generic.KeyNotFoundException": "The given key '<n>' was not present in the dictionary.",
	}
	want := []string{"System.InvalidOperationException", "System.ArgumentException",
		"System.Collections.Generic.KeyNotFoundException", "System.TimeoutException"}
	if len(res.Types) != len(want) {
		t.Fatalf("%d types, want %d", len(res.Types), len(want))
	}
	for i, ty := range res.Types {
		if ty.Name != want[i] || ty.Count != counts[ty.Name] || ty.Caught != ty.Count || ty.Uncaught != 0 {
			t.Errorf("type %d: %s %d (%d caught); want %s %d", i, ty.Name, ty.Count, ty.Caught, want[i], counts[want[i]])
		}
		if len(ty.Patterns) != 1 || ty.Patterns[0].Pattern != patterns[ty.Name] || ty.Patterns[0].Count != ty.Count {
			t.Errorf("%s: patterns %+v", ty.Name, ty.Patterns)
		}
		var n int64
		for _, s := range ty.ThrowSites {
			if !strings.HasPrefix(s.Site, throwSites[ty.Name]+"(") {
				t.Errorf("%s: site %q, want %s", ty.Name, s.Site, throwSites[ty.Name])
			}
			n += s.Count
		}
		if n != ty.Count {
			t.Errorf("%s: sites add up to %d", ty.Name, n)
		}
		if len(ty.CatchSites) != 1 || !strings.HasPrefix(ty.CatchSites[0].Site, catchSites[ty.Name]+"(") || ty.CatchSites[0].Count != ty.Count {
			t.Errorf("%s: catch sites %+v", ty.Name, ty.CatchSites)
		}
	}
	// KeyNotFoundException is thrown by the framework: its site is the
	// first application frame, below ThrowHelper and the indexer.
	knf := res.Types[2]
	st := res.Stacks[knf.ThrowSites[0].Stack].Frames
	if len(st) < 4 || !strings.HasPrefix(st[1], "System.ThrowHelper.ThrowKeyNotFoundException") || !strings.HasPrefix(st[3], "Workload.ExcCache.Get(") {
		t.Errorf("KeyNotFoundException stack %q", st)
	}
	var sum int64
	for _, c := range res.Timeline.Counts {
		sum += c
	}
	if sum != 160 || res.Timeline.BinNs != 1e9 {
		t.Errorf("timeline %+v", res.Timeline)
	}
}

// TestExceptionsBounded replays the fixture with bounds smaller than its
// variety: what passes a bound is counted under the [other ...] entries,
// and every total stays exact.
func TestExceptionsBounded(t *testing.T) {
	res := replay(t, fixture, Options{MaxTypes: 2, MaxStacks: 1, MaxPatterns: 2, MaxCatchSites: 1})
	if res.Thrown != 160 || res.Caught != 160 || res.FoldedTypes != 40 {
		t.Fatalf("thrown %d caught %d folded types %d", res.Thrown, res.Caught, res.FoldedTypes)
	}
	var n, sites, catches int64
	names := map[string]int64{}
	for _, ty := range res.Types {
		n += ty.Count
		names[ty.Name] = ty.Count
		for _, s := range ty.ThrowSites {
			sites += s.Count
		}
		for _, c := range ty.CatchSites {
			catches += c.Count
		}
	}
	if n != 160 || sites != 160 || catches != 160 || names[OtherTypes] != 40 || len(res.Types) != 3 {
		t.Errorf("types %v: %d thrown, %d by site, %d by catch", names, n, sites, catches)
	}
	if res.FoldedStacks == 0 || res.FoldedPatterns == 0 || res.FoldedCatchSites == 0 {
		t.Errorf("folded stacks %d patterns %d catches %d", res.FoldedStacks, res.FoldedPatterns, res.FoldedCatchSites)
	}
}

// TestExceptionsSummary: the live surfaces' bounded view of the fixture:
// the top types with their named sites, the rest as one entry, the same
// answer a second time (from the cached sites).
func TestExceptionsSummary(t *testing.T) {
	r := tracetest.OpenFile(t, tracetest.Path(t, fixture), func(in io.Reader) (*nettrace.Reader, error) {
		z, err := gzip.NewReader(in)
		if err != nil {
			return nil, err
		}
		return nettrace.NewReader(z)
	})
	sym := stacks.NewSymbols(r.Header())
	a := New(r.Header(), Options{Symbols: sym})
	if err := tracetest.ReadAll(t, r, func(ev *nettrace.Event) {
		a.Event(ev)
		sym.Event(ev)
	}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		s := a.Summary(2, 1)
		if s.Thrown != 160 || s.Caught != 160 || s.Open != 0 || len(s.Types) != 3 {
			t.Fatalf("%+v", s)
		}
		ioe, arg, other := s.Types[0], s.Types[1], s.Types[2]
		if ioe.Type != "System.InvalidOperationException" || ioe.Count != 80 || len(ioe.Sites) != 1 ||
			!strings.HasPrefix(ioe.Sites[0].Site, "Workload.ExcOrders.Lookup(") || ioe.Sites[0].Count != 80 {
			t.Errorf("first type %+v", ioe)
		}
		if arg.Type != "System.ArgumentException" || arg.Count != 40 || other.Type != OtherTypes || other.Count != 40 {
			t.Errorf("types %+v", s.Types)
		}
	}
}
