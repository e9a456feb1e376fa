package heapgraph

import (
	"compress/gzip"
	"encoding/binary"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/clrevents"
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
	if err := g.CheckValid(); err != nil {
		tb.Errorf("%s: %v", name, err)
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

// events returns the heap-dump stream of a fixture as (id, payload)
// pairs, the runtime provider's events the builder reads.
func events(tb testing.TB, name string) []rawEvent {
	tb.Helper()
	r := tracetest.OpenFile(tb, tracetest.Path(tb, name), func(in io.Reader) (*nettrace.Reader, error) {
		z, err := gzip.NewReader(in)
		if err != nil {
			return nil, err
		}
		return nettrace.NewReader(z)
	})
	var out []rawEvent
	if err := tracetest.ReadAll(tb, r, func(ev *nettrace.Event) {
		if ev.Meta.Runtime == nettrace.Runtime && Wants(ev.Meta) {
			out = append(out, rawEvent{id: ev.Meta.EventID, version: ev.Meta.Version, ts: ev.Timestamp, payload: append([]byte(nil), ev.Payload...)})
		}
	}); err != nil {
		tb.Fatal(err)
	}
	return out
}

type rawEvent struct {
	id, version uint32
	ts          int64
	payload     []byte
}

// feed builds a graph from raw events; a graph built must hold together.
func feed(tb testing.TB, evs []rawEvent) (*Graph, error) {
	tb.Helper()
	hdr := &nettrace.Header{PointerSize: 8}
	b := NewBuilder(hdr, nil)
	metas := map[uint32]*nettrace.Metadata{}
	for _, e := range evs {
		m := metas[e.id<<8|e.version]
		if m == nil {
			m = &nettrace.Metadata{Runtime: nettrace.Runtime, EventID: e.id, Version: e.version}
			metas[e.id<<8|e.version] = m
		}
		b.Event(&nettrace.Event{Meta: m, Timestamp: e.ts, Payload: e.payload})
	}
	g, err := b.Graph()
	if err == nil {
		if err := g.CheckValid(); err != nil {
			tb.Errorf("%d events: %v", len(evs), err)
		}
	}
	return g, err
}

// TestGraphLost: a heap dump that lost events is never a silent partial
// graph. Without its one GCBulkEdge, every announced reference is
// missing; without the second GCBulkNode, its Index gap is counted and
// the references of the objects after it point at objects never
// described; cut before the dump's GC ended, the walk counts as cut.
func TestGraphLost(t *testing.T) {
	all := events(t, "heap-graph.nettrace.gz")
	drop := func(id uint32, nth int) []rawEvent {
		var out []rawEvent
		n := 0
		for _, e := range all {
			if e.id == id {
				n++
				if n == nth {
					continue
				}
			}
			out = append(out, e)
		}
		return out
	}
	g, err := feed(t, drop(19, 1))
	if err != nil {
		t.Fatal(err)
	}
	if g.Complete() || g.Missing.Edges == 0 {
		t.Errorf("without the edges: complete %v, missing %+v", g.Complete(), g.Missing)
	}
	if g, err = feed(t, drop(18, 2)); err != nil {
		t.Fatal(err)
	}
	if g.Complete() || g.Missing.NodeEvents != 1 {
		t.Errorf("without the second node event: complete %v, missing %+v", g.Complete(), g.Missing)
	}
	for i, e := range all {
		if e.id == 2 { // GCEnd
			if g, err = feed(t, all[:i]); err != nil {
				t.Fatal(err)
			}
			if g.Complete() || !g.Missing.Cut {
				t.Errorf("cut before the GC ended: complete %v, missing %+v", g.Complete(), g.Missing)
			}
			break
		}
	}
	if _, err := feed(t, drop(18, 0)[:3]); err == nil {
		t.Error("a stream without a heap dump gave a graph")
	}
}

// FuzzGraph builds graphs from hostile heap-dump streams: the real
// snapshot's events cut down to a graph of 120 objects (smallStream), one
// event's payload overwritten at off by the fuzzer's bytes (off's high
// bit: the payload ends after them) and the stream cut after cut events.
// The builder and every analysis must not panic, and a graph's arrays
// must agree. The fuzzed bytes are a patch, not a payload: go test
// minimizes every input that finds new code (60 s by default), and the
// 32 KB halves of node payloads this target took took it the whole run
// (about 10 executions in 30 s). The small stream is for speed: every
// input builds and analyses a whole graph, and the whole snapshot's
// (4,491 objects, 17 events of 222 KB) costs 6 ms, 120 µs cut down: its
// inputs, finding more new code, were soon most of the corpus. Its code
// is the same, the full stream is TestGraphLost's.
func FuzzGraph(f *testing.F) {
	small := smallStream(f, events(f, "heap-graph.nettrace.gz"), 40)
	f.Add(uint16(len(small)), uint16(0), []byte{}, uint16(len(small)))
	for i, e := range small {
		if e.id == 18 || e.id == 19 || e.id == 16 || e.id == 38 {
			// The header (Index, Count), and the payload cut in half.
			f.Add(uint16(i), uint16(4), []byte{0xff, 0xff}, uint16(len(small)))
			f.Add(uint16(i), uint16(len(e.payload)/2)|0x8000, []byte{}, uint16(len(small)))
		}
		if e.id == 18 {
			// A node announcing 2^62 references.
			f.Add(uint16(i), uint16(10+8+8+8), []byte{0, 0, 0, 0, 0, 0, 0, 0x40}, uint16(len(small)))
		}
	}
	f.Fuzz(func(t *testing.T, at uint16, off uint16, patch []byte, cut uint16) {
		if len(patch) > maxPatch {
			return // as FuzzGCDump's: quick to minimize
		}
		evs := slices.Clone(small)
		if int(at) < len(evs) {
			p := evs[at].payload
			o := int(off&0x7fff) % (len(p) + 1)
			q := append(append([]byte(nil), p[:o]...), patch...)
			if off&0x8000 == 0 && o+len(patch) < len(p) {
				q = append(q, p[o+len(patch):]...)
			}
			evs[at].payload = q
		}
		if int(cut) < len(evs) {
			evs = evs[:cut]
		}
		g, err := feed(t, evs)
		if err != nil {
			return
		}
		if len(g.Addr) != g.N || len(g.Off) != g.N+2 || int(g.Off[g.N+1]) != len(g.Dst) || len(g.Retained) != g.N+1 {
			t.Fatalf("inconsistent graph: %d nodes, %d offsets, %d refs", g.N, len(g.Off), len(g.Dst))
		}
		var sum uint64
		for _, ts := range g.Types() {
			sum += ts.Bytes
		}
		if sum != g.Bytes || g.Retained[g.N] != g.Bytes {
			t.Fatalf("types sum to %d bytes, the root retains %d, the graph has %d", sum, g.Retained[g.N], g.Bytes)
		}
		g.Why(func(uint32) bool { return true })
		g.Tree(3, 3)
	})
}

// smallStream is the heap-dump stream evs with each GCBulkNode cut to its
// first k objects, the GCBulkEdge events replaced by one carrying those
// objects' references, the roots and statics events cut to their first
// k, and the BulkType events to the kept objects' types: real payloads, a
// graph of a few k objects (the roots and references to objects cut away
// are then missing).
func smallStream(tb testing.TB, evs []rawEvent, k int) []rawEvent {
	tb.Helper()
	const nodeHeader, nodeSize, edgeSize = 10, 8 + 24, 8 + 4 // 64-bit pointers
	var edges []byte                                         // the kept objects' references
	var allEdges []byte
	for _, e := range evs {
		if e.id == 19 {
			allEdges = append(allEdges, e.payload[nodeHeader:]...)
		}
	}
	types := map[uint64]bool{}
	var out []rawEvent
	pos := 0 // the next node's first reference in allEdges
	wroteEdges := false
	for _, e := range evs {
		switch e.id {
		case 18:
			bn, err := clrevents.DecodeBulkNode(e.payload, e.version, 8)
			if err != nil {
				tb.Fatal(err)
			}
			keep := min(k, len(bn.Nodes))
			for i, n := range bn.Nodes {
				end := pos + int(n.EdgeCount)*edgeSize
				if i < keep {
					edges = append(edges, allEdges[pos:end]...)
					types[n.TypeID] = true
				}
				pos = end
			}
			p := slices.Clone(e.payload[:nodeHeader+keep*nodeSize])
			binary.LittleEndian.PutUint32(p[4:], uint32(keep))
			e.payload = p
		case 19:
			if wroteEdges {
				continue
			}
			wroteEdges = true
			p := slices.Clone(e.payload[:nodeHeader])
			binary.LittleEndian.PutUint32(p[4:], uint32(len(edges)/edgeSize))
			e.payload = append(p, edges...)
		case 16: // GCBulkRootEdge: Index, Count, ClrInstanceID; 21-byte roots
			e.payload = trimEntries(e.payload, 10, 4, func(at int) int { return at + 21 }, func(i, _ int) bool { return i < k })
		case 38: // GCBulkRootStaticVar: Count, AppDomainID, ClrInstanceID; ids, flags, name
			e.payload = trimEntries(e.payload, 14, 0, func(at int) int { return utf16zEnd(e.payload, at+28) }, func(i, _ int) bool { return i < k })
		}
		out = append(out, e)
	}
	if pos != len(allEdges) {
		tb.Fatalf("the nodes announce %d bytes of references, the edge events hold %d", pos, len(allEdges))
	}
	// BulkType (Count, ClrInstanceID; ids, flags, element type, name,
	// type parameters): the kept objects' types (they come before the
	// nodes, so a second pass).
	for i, e := range out {
		if e.id == 15 {
			p := e.payload
			out[i].payload = trimEntries(p, 6, 0, func(at int) int {
				end := utf16zEnd(p, at+25)
				return end + 4 + 8*int(binary.LittleEndian.Uint32(p[end:]))
			}, func(_, at int) bool { return types[binary.LittleEndian.Uint64(p[at:])] })
		}
	}
	return out
}

// trimEntries keeps the entries of a bulk payload (a header of hdr bytes
// with the uint32 count at countAt) that keep wants; next gives the end
// of the entry at an offset.
func trimEntries(p []byte, hdr, countAt int, next func(at int) int, keep func(i, at int) bool) []byte {
	out := slices.Clone(p[:hdr])
	n := int(binary.LittleEndian.Uint32(p[countAt:]))
	kept := 0
	for i, at := 0, hdr; i < n; i++ {
		end := next(at)
		if keep(i, at) {
			out = append(out, p[at:end]...)
			kept++
		}
		at = end
	}
	binary.LittleEndian.PutUint32(out[countAt:], uint32(kept))
	return out
}

// utf16zEnd is the offset after the NUL-terminated UTF-16 string at at.
func utf16zEnd(p []byte, at int) int {
	for p[at] != 0 || p[at+1] != 0 {
		at += 2
	}
	return at + 2
}
