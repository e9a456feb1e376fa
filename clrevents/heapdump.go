package clrevents

import (
	"fmt"

	"github.com/clrspy/clrspy/nettrace"
)

// Heap-dump events (keyword GCHeapDump 0x100000): during a GC the runtime
// induced because a session enabled GCHeapCollect, it walks the heap and
// describes every live object (GCBulkNode), its references (GCBulkEdge, in
// the order of the nodes: node i's EdgeCount edges follow node i-1's), the
// roots (GCBulkRootEdge, GCBulkRootStaticVar, GCBulkRootConditionalWeak
// TableElementEdge) and COM wrappers (GCBulkRCW, GCBulkRootCCW). Index
// numbers each kind's bulk events of one walk from 0, so a gap is a lost
// event. Layouts: ClrEtwAll.man; ../shared/docs/runtime-diagnostics.md.

// Event ids of the heap dump.
const (
	IDGCBulkRootEdge      = 16
	IDGCBulkRootCWTEdge   = 17
	IDGCBulkNode          = 18
	IDGCBulkEdge          = 19
	IDGCBulkRootCCW       = 36
	IDGCBulkRCW           = 37
	IDGCBulkRootStaticVar = 38
)

// HeapNode is one object of GCBulkNode.
type HeapNode struct {
	Address   uint64
	Size      uint64
	TypeID    uint64 // a BulkType TypeID (MethodTable)
	EdgeCount uint64 // its references, next in the GCBulkEdge stream
}

// BulkNode is GCBulkNode (id 18).
type BulkNode struct {
	Index uint32
	Nodes []HeapNode
}

// HeapEdge is one reference of GCBulkEdge.
type HeapEdge struct {
	Target  uint64 // the referenced object's address
	FieldID uint32 // ReferencingFieldID (0: not given)
}

// BulkEdge is GCBulkEdge (id 19).
type BulkEdge struct {
	Index uint32
	Edges []HeapEdge
}

// GC root kinds of GCBulkRootEdge.
const (
	RootKindStack     = 0
	RootKindFinalizer = 1
	RootKindHandle    = 2
	RootKindOlder     = 3
	RootKindSizedRef  = 4
	RootKindOverflow  = 5
)

// GC root flags of GCBulkRootEdge.
const (
	RootFlagPinning    = 1
	RootFlagWeakRef    = 2
	RootFlagInterior   = 4
	RootFlagRefCounted = 8
)

// HeapRoot is one root of GCBulkRootEdge.
type HeapRoot struct {
	Object uint64 // RootedNodeAddress
	Kind   uint8  // RootKind*
	Flags  uint32 // RootFlag*
	// ID is the GCRootID: the handle's address for handle roots, the
	// frame's MethodDesc (a MethodID of the method events) for stack
	// roots, 0 when not given.
	ID uint64
}

// BulkRootEdge is GCBulkRootEdge (id 16).
type BulkRootEdge struct {
	Index uint32
	Roots []HeapRoot
}

// CWTEdge is one element of GCBulkRootConditionalWeakTableElementEdge: the
// value is alive as long as the key is (a dependent handle).
type CWTEdge struct {
	Key, Value, RootID uint64
}

// BulkCWTEdge is GCBulkRootConditionalWeakTableElementEdge (id 17).
type BulkCWTEdge struct {
	Index uint32
	Edges []CWTEdge
}

// StaticRoot is one static field of GCBulkRootStaticVar.
type StaticRoot struct {
	RootID uint64 // the static's address
	Object uint64
	TypeID uint64 // the class declaring the field
	Flags  uint32 // 1: thread static
	Field  string
}

// StaticFlagThreadLocal marks a thread-static field.
const StaticFlagThreadLocal = 1

// BulkStaticVar is GCBulkRootStaticVar (id 38).
type BulkStaticVar struct {
	AppDomainID uint64
	Statics     []StaticRoot
}

// BulkCOM is GCBulkRCW (id 37) or GCBulkRootCCW (id 36): only the count of
// wrappers is read (clrspy does not model COM objects; Linux has none).
type BulkCOM struct {
	Count uint32
}

const (
	heapNodeFixed = 8 + 8 + 8 // Size, TypeID, EdgeCount after the pointer
	heapRootFixed = 1 + 4     // kind, flags between the two pointers
)

// DecodeBulkNode decodes GCBulkNode v0 into a fresh slice.
func DecodeBulkNode(payload []byte, version uint32, ptrSize int) (BulkNode, error) {
	n, idx, err := AppendBulkNodes(nil, payload, version, ptrSize)
	return BulkNode{Index: idx, Nodes: n}, err
}

// AppendBulkNodes appends the event's nodes to dst (no allocation once
// dst has room) and returns the event's Index.
func AppendBulkNodes(dst []HeapNode, payload []byte, version uint32, ptrSize int) ([]HeapNode, uint32, error) {
	r := nettrace.NewCursor(payload)
	index, count, err := bulkHeader(&r, "GCBulkNode", version, ptrSize+heapNodeFixed)
	if err != nil {
		return dst, 0, err
	}
	for i := uint32(0); i < count; i++ {
		dst = append(dst, HeapNode{Address: r.Ptr(ptrSize), Size: r.U64(), TypeID: r.U64(), EdgeCount: r.U64()})
	}
	return dst, index, nil
}

// DecodeBulkEdge decodes GCBulkEdge v0 into a fresh slice.
func DecodeBulkEdge(payload []byte, version uint32, ptrSize int) (BulkEdge, error) {
	e, idx, err := AppendBulkEdges(nil, payload, version, ptrSize)
	return BulkEdge{Index: idx, Edges: e}, err
}

// AppendBulkEdges appends the event's edges to dst and returns its Index.
func AppendBulkEdges(dst []HeapEdge, payload []byte, version uint32, ptrSize int) ([]HeapEdge, uint32, error) {
	r := nettrace.NewCursor(payload)
	index, count, err := bulkHeader(&r, "GCBulkEdge", version, ptrSize+4)
	if err != nil {
		return dst, 0, err
	}
	for i := uint32(0); i < count; i++ {
		dst = append(dst, HeapEdge{Target: r.Ptr(ptrSize), FieldID: r.U32()})
	}
	return dst, index, nil
}

// DecodeBulkRootEdge decodes GCBulkRootEdge v0 into a fresh slice.
func DecodeBulkRootEdge(payload []byte, version uint32, ptrSize int) (BulkRootEdge, error) {
	rs, idx, err := AppendBulkRoots(nil, payload, version, ptrSize)
	return BulkRootEdge{Index: idx, Roots: rs}, err
}

// AppendBulkRoots appends the event's roots to dst and returns its Index.
func AppendBulkRoots(dst []HeapRoot, payload []byte, version uint32, ptrSize int) ([]HeapRoot, uint32, error) {
	r := nettrace.NewCursor(payload)
	index, count, err := bulkHeader(&r, "GCBulkRootEdge", version, 2*ptrSize+heapRootFixed)
	if err != nil {
		return dst, 0, err
	}
	for i := uint32(0); i < count; i++ {
		dst = append(dst, HeapRoot{Object: r.Ptr(ptrSize), Kind: r.U8(), Flags: r.U32(), ID: r.Ptr(ptrSize)})
	}
	return dst, index, nil
}

// DecodeBulkCWTEdge decodes GCBulkRootConditionalWeakTableElementEdge v0.
func DecodeBulkCWTEdge(payload []byte, version uint32, ptrSize int) (BulkCWTEdge, error) {
	r := nettrace.NewCursor(payload)
	index, count, err := bulkHeader(&r, "GCBulkRootConditionalWeakTableElementEdge", version, 3*ptrSize)
	if err != nil {
		return BulkCWTEdge{}, err
	}
	b := BulkCWTEdge{Index: index, Edges: make([]CWTEdge, count)}
	for i := range b.Edges {
		b.Edges[i] = CWTEdge{Key: r.Ptr(ptrSize), Value: r.Ptr(ptrSize), RootID: r.Ptr(ptrSize)}
	}
	return b, nil
}

// minStaticRoot is the smallest static: three ids, flags, empty name.
const minStaticRoot = 8 + 8 + 8 + 4 + 2

// DecodeBulkStaticVar decodes GCBulkRootStaticVar v0 (ids are 64-bit in
// every pointer size: the manifest declares them UInt64).
func DecodeBulkStaticVar(payload []byte, version uint32, ptrSize int) (BulkStaticVar, error) {
	const event = "GCBulkRootStaticVar"
	r := nettrace.NewCursor(payload)
	count := r.U32()
	b := BulkStaticVar{AppDomainID: r.U64()}
	r.U16() // ClrInstanceID
	if !r.OK() {
		return BulkStaticVar{}, short(event, version, len(payload))
	}
	if uint64(count)*minStaticRoot > uint64(r.Rest()) {
		return BulkStaticVar{}, fmt.Errorf("%s v%d: %w (Count %d cannot fit in %d bytes)", event, version, ErrShort, count, r.Rest())
	}
	b.Statics = make([]StaticRoot, 0, count)
	for i := uint32(0); i < count; i++ {
		s := StaticRoot{RootID: r.U64(), Object: r.U64(), TypeID: r.U64(), Flags: r.U32(), Field: r.UTF16Z()}
		if !r.OK() {
			return BulkStaticVar{}, fmt.Errorf("%s v%d: %w (static %d of %d)", event, version, ErrShort, i, count)
		}
		b.Statics = append(b.Statics, s)
	}
	return b, nil
}

// DecodeBulkCOM decodes the count of GCBulkRCW or GCBulkRootCCW v0.
func DecodeBulkCOM(payload []byte, version uint32, ptrSize int) (BulkCOM, error) {
	r := nettrace.NewCursor(payload)
	count := r.U32()
	r.U16() // ClrInstanceID
	if !r.OK() {
		return BulkCOM{}, short("GCBulkRCW/GCBulkRootCCW", version, len(payload))
	}
	return BulkCOM{Count: count}, nil
}
