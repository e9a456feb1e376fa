package heapgraph

import (
	"compress/gzip"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/nettrace"
)

// load builds the graph of a gzipped fixture trace.
func load(tb testing.TB, name string) *Graph {
	tb.Helper()
	r := tracetest.OpenFile(tb, tracetest.Path(tb, name), func(in io.Reader) (*nettrace.Reader, error) {
		z, err := gzip.NewReader(in)
		if err != nil {
			return nil, err
		}
		return nettrace.NewReader(z)
	})
	b := NewBuilder(r.Header(), nil)
	if err := tracetest.ReadAll(tb, r, b.Event); err != nil && !errors.Is(err, nettrace.ErrTruncated) {
		tb.Fatal(err)
	}
	g, err := b.Graph()
	if err != nil {
		tb.Fatal(err)
	}
	return g
}

func typeMap(g *Graph) map[string]TypeStat {
	m := map[string]TypeStat{}
	for _, t := range g.Types() {
		m[t.Type] = t
	}
	return m
}

// TestGraphWorkload reads heap-graph.nettrace.gz, a snapshot of the graph
// workload (testdata/traces/heap-graph.workload.json): 2,000 GraphItem
// under a static, one object held by a handle, one by a parked thread's
// local. Its types' counts, the holder's retained bytes and the three
// roots must be the workload's own figures.
func TestGraphWorkload(t *testing.T) {
	g := load(t, "heap-graph.nettrace.gz")
	w := tracetest.Workload(t, "heap-graph")
	var holderBytes, handleBytes, stackBytes int64
	if w.Get("holderBytes", &holderBytes) != nil || w.Get("handleBytes", &handleBytes) != nil || w.Get("stackBytes", &stackBytes) != nil {
		t.Fatal("workload result lacks its byte counts")
	}
	// The walk also describes the frozen segments' objects (string
	// literals, RuntimeType objects) that no reported root reaches: the
	// unrooted ones here (107 in this recording).
	if !g.Complete() || g.Missing.Unrooted > 200 {
		t.Errorf("missing %+v", g.Missing)
	}
	ts := typeMap(g)
	t.Logf("%d objects, %d bytes, pause %v, %d roots", g.N, g.Bytes, g.Pause, len(g.Roots))
	for name, want := range map[string]uint64{"Workload.GraphItem": 2000, "Workload.GraphLeaf": 2000,
		"Workload.GraphHolder": 1, "Workload.GraphItem[]": 1, "Workload.GraphHandleOnly": 1, "Workload.GraphStackOnly": 1} {
		if got := ts[name].Count; got != want {
			t.Errorf("%s: %d objects, the workload made %d", name, got, want)
		}
	}
	if got := ts["Workload.GraphHolder"].Retained; got != uint64(holderBytes) {
		t.Errorf("GraphHolder retains %d bytes, the workload allocated %d under it", got, holderBytes)
	}
	if got := ts["Workload.GraphHandleOnly"].Retained; got != uint64(handleBytes) {
		t.Errorf("HandleOnly retains %d bytes, allocated %d", got, handleBytes)
	}
	if got := ts["Workload.GraphStackOnly"].Retained; got != uint64(stackBytes) {
		t.Errorf("StackOnly retains %d bytes, allocated %d", got, stackBytes)
	}
	// Items and leaves: each item dominates its leaf.
	if it, lf := ts["Workload.GraphItem"], ts["Workload.GraphLeaf"]; it.Retained != it.Bytes+lf.Bytes {
		t.Errorf("GraphItem retains %d, want its %d + the leaves' %d", it.Retained, it.Bytes, lf.Bytes)
	}
	why := func(typ string) Path {
		m, err := g.Matcher(typ)
		if err != nil {
			t.Fatal(err)
		}
		ps := g.Why(m)
		if len(ps) != 1 {
			t.Fatalf("--why %s: %d paths, want 1: %+v", typ, len(ps), ps)
		}
		return ps[0]
	}
	if p := why("GraphLeaf"); p.RootKind != RootStatic || p.Root != "Holder" || p.Count != 2000 ||
		strings.Join(p.Types, " > ") != "Workload.GraphHolder > Workload.GraphItem[] > Workload.GraphItem > Workload.GraphLeaf" {
		t.Errorf("GraphLeaf path %+v", p)
	}
	if p := why("GraphHandleOnly"); p.RootKind != RootHandle || p.Count != 1 || len(p.Types) != 1 {
		t.Errorf("HandleOnly path %+v", p)
	}
	if p := why("GraphStackOnly"); p.RootKind != RootStack || !strings.Contains(p.Root, "Park") || p.Count != 1 {
		t.Errorf("StackOnly path %+v", p)
	}
}

// TestGraphDiff compares the two snapshots of the graph workload: between
// them it added 500 GraphItem, 500 GraphLeaf and one GraphItem[] (the
// workload's addedBytes) under the static holder, and nothing else of
// its types changed.
func TestGraphDiff(t *testing.T) {
	old, cur := load(t, "heap-graph.nettrace.gz"), load(t, "heap-graph-added.nettrace.gz")
	w := tracetest.Workload(t, "heap-graph-added")
	var added, addedBytes int64
	if w.Get("addedItems", &added) != nil || w.Get("addedBytes", &addedBytes) != nil {
		t.Fatal("workload result lacks addedItems/addedBytes")
	}
	d := Compare(old, cur)
	got := map[string]TypeDelta{}
	for _, td := range d.Types {
		got[td.Type] = td
	}
	var bytes int64
	for name, want := range map[string]int64{"Workload.GraphItem": added, "Workload.GraphLeaf": added, "Workload.GraphItem[]": 1,
		"Workload.GraphHolder": 0, "Workload.GraphHandleOnly": 0, "Workload.GraphStackOnly": 0} {
		if got[name].CountDelta != want {
			t.Errorf("%s: count delta %d, the workload added %d", name, got[name].CountDelta, want)
		}
		bytes += got[name].BytesDelta
	}
	if bytes != addedBytes {
		t.Errorf("the workload's types grew by %d bytes, it allocated %d", bytes, addedBytes)
	}
	if h := got["Workload.GraphHolder"]; h.RetainedDelta != addedBytes {
		t.Errorf("GraphHolder's retained bytes grew by %d, want %d", h.RetainedDelta, addedBytes)
	}
	// The runtime's own EventSource grew too (the first session made
	// its metadata): the holder's growth is one of the dominators'.
	grew := false
	for _, g := range d.Growth {
		if g.Root == "Holder" && len(g.Path) == 1 && g.Path[0] == "Workload.GraphHolder" {
			grew = g.Delta == addedBytes
		}
	}
	if !grew {
		t.Errorf("growth %+v: want the static Holder's GraphHolder by %d", d.Growth, addedBytes)
	}
	found := false
	for _, s := range d.Suspects {
		if s.Type == "Workload.GraphLeaf" && s.Path.Root == "Holder" {
			found = true
		}
	}
	if !found {
		t.Errorf("GraphLeaf not a suspect: %+v", d.Suspects)
	}
}
