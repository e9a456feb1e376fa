package report

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/heapgraph"
	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/nettrace"
)

// pageData is the page's data as the page embeds it.
func pageData(t *testing.T, p *Page) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	if err := writeJSONStream(w, reflect.ValueOf(p), pageJSONDepth); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	if want := mustMarshal(t, p); !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("the page's data streamed differs from json.Marshal")
	}
	return buf.Bytes()
}

var snakeKey = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// nonSnakeKeys reports every object key of v that is not snake_case.
func nonSnakeKeys(v any, path string, bad *[]string) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if !snakeKey.MatchString(k) {
				*bad = append(*bad, path+"."+k)
			}
			nonSnakeKeys(e, path+"."+k, bad)
		}
	case []any:
		for _, e := range x {
			nonSnakeKeys(e, path+"[]", bad)
		}
	}
}

// TestPageSnapshotJSON: the data the page embeds for the graph workload's
// snapshot (heap-graph.nettrace.gz) is heapgraph's: the types and their
// retained bytes are Graph.Types' (the holder's the bytes the workload
// allocated under it), each top type's paths are Graph.Why's for that type,
// the tree's first node is the static holder, and every drawn node shows
// exactly what it retains (own bytes, children, groups and the rest). Keys
// are snake_case; the section is a few KB.
func TestPageSnapshotJSON(t *testing.T) {
	g := graphFixture(t)
	types := g.Types()
	p := NewPage(PageParts{Title: "heap-graph", Input: Input{Source: "heap-graph", Complete: true}, Snapshot: g})
	data := pageData(t, p)
	var raw struct {
		Snapshot map[string]any `json:"snapshot"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	var bad []string
	nonSnakeKeys(raw.Snapshot, "snapshot", &bad)
	if len(bad) > 0 || raw.Snapshot == nil {
		t.Errorf("keys not in snake_case: %v", bad)
	}
	var doc struct {
		Input    Input        `json:"input"`
		Snapshot PageSnapshot `json:"snapshot"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	s := doc.Snapshot
	if !doc.Input.Complete || !s.Complete || s.Note != "" || s.Objects != uint64(g.N) || s.Bytes != g.Bytes || s.GC != g.GC {
		t.Errorf("snapshot %d objects, %d bytes, GC %d, complete %v %q; the graph %d, %d, %d", s.Objects, s.Bytes, s.GC, s.Complete, s.Note, g.N, g.Bytes, g.GC)
	}
	if len(s.Types) != min(len(types), maxTableRows) || s.MoreTypes != len(types)-len(s.Types) {
		t.Fatalf("%d types (+%d), the graph has %d", len(s.Types), s.MoreTypes, len(types))
	}
	for i, ty := range s.Types {
		if w := types[i]; ty != (SnapshotTypeJSON{Type: w.Type, Count: w.Count, Bytes: w.Bytes, RetainedBytes: w.Retained, RetainedExact: w.RetainedExact}) {
			t.Errorf("type %d: %+v, heapgraph %+v", i, ty, w)
		}
	}
	var holderBytes uint64
	if err := tracetest.Workload(t, "heap-graph").Get("holderBytes", &holderBytes); err != nil {
		t.Fatal(err)
	}
	if s.Types[0].Type != "Workload.GraphHolder" || s.Types[0].RetainedBytes != holderBytes {
		t.Errorf("first type %+v, want Workload.GraphHolder retaining the workload's %d bytes", s.Types[0], holderBytes)
	}

	// Each top type's paths: --why's for that type.
	if len(s.Why) != min(len(s.Types), snapWhyTypes) {
		t.Fatalf("paths of %d types", len(s.Why))
	}
	for i, w := range s.Why {
		m, err := g.Matcher(s.Types[i].Type)
		if err != nil {
			t.Fatal(err)
		}
		var want []SnapshotPathJSON
		for _, q := range g.Why(m) {
			want = append(want, SnapshotPathJSON{RootKind: q.RootKind.String(), Root: q.Root, Path: q.Types, Count: q.Count, Bytes: q.Bytes})
		}
		if len(w.Paths)+w.More != len(want) || len(w.Paths) > snapWhyPaths {
			t.Errorf("%s: %d paths + %d more, --why has %d", s.Types[i].Type, len(w.Paths), w.More, len(want))
			continue
		}
		for j, p := range w.Paths {
			if q := want[j]; p.RootKind != q.RootKind || p.Root != q.Root || !slices.Equal(p.Path, q.Path) || p.Count != q.Count || p.Bytes != q.Bytes {
				t.Errorf("%s path %d: %+v, --why %+v", s.Types[i].Type, j, p, q)
			}
		}
	}
	holderPath := s.Why[0].Paths[0]
	if holderPath.RootKind != "static" || !strings.HasSuffix(holderPath.Root, "Holder") || !slices.Equal(holderPath.Path, []string{"Workload.GraphHolder"}) {
		t.Errorf("holder's path %+v", holderPath)
	}

	tr := s.Tree
	n := len(tr.Depth)
	for name, l := range map[string]int{"kind": len(tr.Kind), "type": len(tr.Type), "count": len(tr.Count), "bytes": len(tr.Bytes),
		"retained": len(tr.Retained), "addr": len(tr.Addr), "root": len(tr.Root), "more": len(tr.More)} {
		if l != n {
			t.Fatalf("tree column %s: %d values, depth has %d", name, l, n)
		}
	}
	if n < 10 || tr.Retained[0] != g.Bytes || tr.Depth[1] != 1 || tr.Names[tr.Type[1]] != "Workload.GraphHolder" ||
		tr.Retained[1] != holderBytes || tr.Root[1] < 0 || tr.Names[tr.Root[1]] != "static "+holderPath.Root {
		t.Errorf("tree: %d nodes, root retains %d; first node %+v", n, tr.Retained[0], tr.Names)
	}
	// The holder's array: its 2,000 items, each too small to draw, are
	// one group.
	if tr.Names[tr.Type[2]] != "Workload.GraphItem[]" || tr.Kind[3] != SnapNodeGroup || tr.Names[tr.Type[3]] != "Workload.GraphItem" || tr.Count[3] != 2000 {
		t.Errorf("under the holder: %s, then kind %d %s ×%d", tr.Names[tr.Type[2]], tr.Kind[3], tr.Names[tr.Type[3]], tr.Count[3])
	}
	// A drawn object's own bytes and its children's retained bytes are
	// its retained bytes, to the byte.
	for i := 0; i < n; i++ {
		if tr.Kind[i] != SnapNodeObject || int(tr.Depth[i]) >= tr.MaxDepth {
			continue
		}
		sum := tr.Bytes[i]
		for j := i + 1; j < n && tr.Depth[j] > tr.Depth[i]; j++ {
			if tr.Depth[j] == tr.Depth[i]+1 {
				sum += tr.Retained[j]
			}
		}
		if sum != tr.Retained[i] {
			t.Errorf("node %d (%s): own and children %d, retained %d", i, tr.Names[max(tr.Type[i], 0)], sum, tr.Retained[i])
		}
	}
	if b, _ := json.Marshal(s); len(b) > 40<<10 {
		t.Errorf("the section is %d bytes", len(b))
	}
}

// TestPageSnapshotIncomplete: a snapshot whose one GCBulkEdge event was
// lost makes the page partial, and the section says why.
func TestPageSnapshotIncomplete(t *testing.T) {
	r := tracetest.OpenFile(t, tracetest.Path(t, "heap-graph.nettrace.gz"), func(in io.Reader) (*nettrace.Reader, error) {
		z, err := gzip.NewReader(in)
		if err != nil {
			return nil, err
		}
		return nettrace.NewReader(z)
	})
	b := heapgraph.NewBuilder(r.Header(), nil)
	dropped := false
	if err := tracetest.ReadAll(t, r, func(ev *nettrace.Event) {
		if !dropped && ev.Meta.Runtime == nettrace.Runtime && ev.Meta.EventID == clrevents.IDGCBulkEdge {
			dropped = true
			return
		}
		b.Event(ev)
	}); err != nil {
		t.Fatal(err)
	}
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	p := NewPage(PageParts{Title: "lost", Input: Input{Source: "lost", Complete: true}, Snapshot: g})
	var doc struct {
		Input    Input        `json:"input"`
		Snapshot PageSnapshot `json:"snapshot"`
	}
	if err := json.Unmarshal(pageData(t, p), &doc); err != nil {
		t.Fatal(err)
	}
	note := doc.Snapshot.Note
	if !dropped || doc.Snapshot.Complete || !strings.HasPrefix(note, "the heap snapshot is incomplete: ") || !strings.Contains(note, "references the objects announced never came") ||
		doc.Snapshot.Missing.Edges == 0 || doc.Input.Complete || !slices.Contains(doc.Input.Partial, note) {
		t.Errorf("complete %v, note %q, missing %+v; input complete %v, partial %q", doc.Snapshot.Complete, note, doc.Snapshot.Missing, doc.Input.Complete, doc.Input.Partial)
	}
}

// TestPageSnapshotTypeNames: the page of the graph workload's second
// snapshot carries the readable names of its generic types beside the
// runtime's (the page shows them; its rows keep the exact names).
func TestPageSnapshotTypeNames(t *testing.T) {
	s := NewPageSnapshot(graphFile(t, "heap-graph-added.nettrace.gz"), 50)
	exact := "Entry[System.Int32,System.Diagnostics.Tracing.EventSource+EventMetadata][]"
	if got := nameMap(s.TypeNames)[exact]; got != "Dictionary<Int32,EventSource+EventMetadata>+Entry[]" {
		t.Errorf("type_names[%q] = %q", exact, got)
	}
	if _, ok := nameMap(s.TypeNames)["Workload.GraphItem"]; ok {
		t.Error("a non-generic type got a second name")
	}
	found := false
	for _, ty := range s.Types {
		found = found || ty.Type == exact
	}
	if !found {
		t.Errorf("the page's types lost the runtime's name %q", exact)
	}
}
