package clrevents

import (
	"compress/gzip"
	"encoding/binary"
	"errors"
	"io"
	"testing"

	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/nettrace"
)

// heapDumpPayloads returns the heap-dump events of heap-graph.nettrace.gz
// (a snapshot of the graph workload) by id.
func heapDumpPayloads(tb testing.TB) map[uint32][][]byte {
	tb.Helper()
	r := tracetest.OpenFile(tb, tracetest.Path(tb, "heap-graph.nettrace.gz"), func(in io.Reader) (*nettrace.Reader, error) {
		z, err := gzip.NewReader(in)
		if err != nil {
			return nil, err
		}
		return nettrace.NewReader(z)
	})
	out := map[uint32][][]byte{}
	if err := tracetest.ReadAll(tb, r, func(ev *nettrace.Event) {
		if ev.Meta.Runtime == nettrace.Runtime {
			switch ev.Meta.EventID {
			case IDGCBulkNode, IDGCBulkEdge, IDGCBulkRootEdge, IDGCBulkRootStaticVar, IDGCBulkRootCWTEdge, IDGCBulkRCW, IDGCBulkRootCCW:
				out[ev.Meta.EventID] = append(out[ev.Meta.EventID], append([]byte(nil), ev.Payload...))
			}
		}
	}); err != nil {
		tb.Fatal(err)
	}
	return out
}

// TestHeapDumpReal decodes the real snapshot: 4,491 objects in three
// GCBulkNode events (Index 0, 1, 2), whose EdgeCounts sum to the edges of
// its one GCBulkEdge; the static Holder (a GraphHolder) among the statics;
// stack, handle and finalizer roots.
func TestHeapDumpReal(t *testing.T) {
	ps := heapDumpPayloads(t)
	var nodes []HeapNode
	var announced uint64
	for i, p := range ps[IDGCBulkNode] {
		var idx uint32
		var err error
		before := len(nodes)
		if nodes, idx, err = AppendBulkNodes(nodes, p, 0, 8); err != nil || idx != uint32(i) {
			t.Fatalf("node event %d: index %d, %v", i, idx, err)
		}
		for _, n := range nodes[before:] {
			announced += n.EdgeCount
		}
	}
	if len(nodes) != 4491 || len(ps[IDGCBulkNode]) != 3 {
		t.Errorf("%d objects in %d events, want 4491 in 3", len(nodes), len(ps[IDGCBulkNode]))
	}
	var edges uint64
	for _, p := range ps[IDGCBulkEdge] {
		e, err := DecodeBulkEdge(p, 0, 8)
		if err != nil {
			t.Fatal(err)
		}
		edges += uint64(len(e.Edges))
	}
	if edges != announced || edges == 0 {
		t.Errorf("%d edges, the nodes announced %d", edges, announced)
	}
	kinds := map[uint8]int{}
	for _, p := range ps[IDGCBulkRootEdge] {
		r, err := DecodeBulkRootEdge(p, 0, 8)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range r.Roots {
			kinds[x.Kind]++
		}
	}
	if kinds[RootKindStack] == 0 || kinds[RootKindHandle] == 0 || kinds[RootKindFinalizer] == 0 {
		t.Errorf("root kinds %v: want stack, handle and finalizer roots", kinds)
	}
	holder := false
	for _, p := range ps[IDGCBulkRootStaticVar] {
		s, err := DecodeBulkStaticVar(p, 0, 8)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range s.Statics {
			holder = holder || x.Field == "Holder"
		}
	}
	if !holder {
		t.Error("no static named Holder")
	}
}

// TestHeapDumpShort: a Count the payload cannot hold is an error, not an
// allocation or a panic.
func TestHeapDumpShort(t *testing.T) {
	huge := le{}.u32(0).u32(0xffffffff).u16(0)
	for name, err := range map[string]error{
		"node":   func() error { _, err := DecodeBulkNode(huge, 0, 8); return err }(),
		"edge":   func() error { _, err := DecodeBulkEdge(huge, 0, 8); return err }(),
		"root":   func() error { _, err := DecodeBulkRootEdge(huge, 0, 8); return err }(),
		"cwt":    func() error { _, err := DecodeBulkCWTEdge(huge, 0, 4); return err }(),
		"static": func() error { _, err := DecodeBulkStaticVar(le{}.u32(0xffffffff).u64(0).u16(0), 0, 8); return err }(),
		"com":    func() error { _, err := DecodeBulkCOM([]byte{1}, 0, 8); return err }(),
	} {
		if !errors.Is(err, ErrShort) {
			t.Errorf("%s: %v, want ErrShort", name, err)
		}
	}
}

// FuzzHeapDump decodes hostile heap-dump payloads. Its seeds are the real
// snapshot's first events of each kind cut to their first few entries
// (Count rewritten): go test minimizes every input that finds new code
// byte by byte (60 s unless -fuzzminimizetime says otherwise), and the
// whole 64 KB GCBulkNode payloads it took kept both workers minimizing
// for the whole run (23 executions in 20 s).
func FuzzHeapDump(f *testing.F) {
	for id, ps := range heapDumpPayloads(f) {
		for i, p := range ps {
			if i < 2 {
				f.Add(firstEntries(id, p, 4), uint8(id), true)
			}
		}
	}
	f.Fuzz(func(t *testing.T, p []byte, id uint8, ptr8 bool) {
		ptr := 4
		if ptr8 {
			ptr = 8
		}
		if b, err := DecodeBulkNode(p, 0, ptr); err == nil && 10+(ptr+24)*len(b.Nodes) > len(p) {
			t.Fatalf("%d nodes from %d bytes", len(b.Nodes), len(p))
		}
		if b, err := DecodeBulkEdge(p, 0, ptr); err == nil && 10+(ptr+4)*len(b.Edges) > len(p) {
			t.Fatalf("%d edges from %d bytes", len(b.Edges), len(p))
		}
		_, _ = DecodeBulkRootEdge(p, 0, ptr)
		_, _ = DecodeBulkCWTEdge(p, 0, ptr)
		_, _ = DecodeBulkStaticVar(p, 0, ptr)
		_, _ = DecodeBulkCOM(p, 0, ptr)
	})
}

// firstEntries is a 64-bit heap-dump payload of kind id cut to its first k
// entries, its Count rewritten (the payload itself when its kind's
// entries are not cut here).
func firstEntries(id uint32, p []byte, k int) []byte {
	hdr, countAt := 10, 4 // Index, Count, ClrInstanceID
	var next func(at int) int
	switch id {
	case IDGCBulkNode:
		next = func(at int) int { return at + 8 + heapNodeFixed }
	case IDGCBulkEdge:
		next = func(at int) int { return at + 8 + 4 }
	case IDGCBulkRootEdge:
		next = func(at int) int { return at + 16 + heapRootFixed }
	case IDGCBulkRootCWTEdge:
		next = func(at int) int { return at + 24 }
	case IDGCBulkRootStaticVar: // Count, AppDomainID, ClrInstanceID; ids, flags, name
		hdr, countAt = 14, 0
		next = func(at int) int {
			at += 28
			for at+1 < len(p) && (p[at] != 0 || p[at+1] != 0) {
				at += 2
			}
			return at + 2
		}
	default:
		return p
	}
	end := hdr
	n := min(k, int(binary.LittleEndian.Uint32(p[countAt:])))
	for range n {
		end = min(next(end), len(p))
	}
	out := append([]byte(nil), p[:end]...)
	binary.LittleEndian.PutUint32(out[countAt:], uint32(n))
	return out
}
