package heapgraph

import (
	"encoding/binary"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/clrmeta"
	"github.com/clrspy/clrspy/nettrace"
)

// rawRoot is a root as the events give it, resolved to a node id at the
// end (the object is usually described after its root).
type rawRoot struct {
	obj  uint64
	id   uint64 // GCRootID, or the static's declaring TypeID
	kind RootKind
	name uint32 // index into Builder.names (0: none yet)
}

// Builder collects one heap dump from a stream of events: the first
// blocking gen2 GC during which the runtime describes objects. It is an
// analysis.Analyzer; Graph builds the result once the stream ended (or
// once Done reported the dump's GC ended).
type Builder struct {
	hdr   *nettrace.Header
	ptr   int
	stats analysis.Stats

	state int // waiting, dumping, done
	gc    uint32
	end   int64 // the dump GC's GCEnd
	pause int64 // its stop (ns), from the pause analysis (Stopped)
	// stoppedAt: when that stop began (ns since the session's start): when
	// the snapshot was taken.
	stoppedAt int64
	// startedAt: when the dump's GC started (ns since the session's start),
	// the snapshot's time where no pause analysis hands its stop on.
	startedAt int64
	onDone    func()

	// Nodes in the order described, parallel arrays (mapped outside the
	// Go heap when mem is set: see mem_linux.go).
	mem       *store
	autoSpill bool // spill if the graph would not fit (MapArrays)
	addrs     vec[uint64]
	sizes     vec[uint64]
	types     vec[uint32] // index into typeNames
	nedges    vec[uint32]
	// edges: the edges' target addresses in node order, each the zigzag
	// varint of its difference from the previous one (neighbours point
	// near each other: 1-3 bytes an edge, not 8); nEdges of them, the
	// last lastEdge.
	edges    vec[byte]
	nEdges   uint64
	lastEdge uint64
	roots    []rawRoot

	typeOf map[uint64]uint32 // BulkType TypeID -> index
	// The last TypeID typeIndex found, and its index.
	lastTypeID uint64
	lastType   uint32
	lastTypeOK bool
	typeNames  []string
	typeIDs    []uint64          // each type's TypeID
	typeMods   []uint64          // each type's ModuleID (0: unknown)
	known      map[uint64]string // KnownTypes
	modules    map[uint64]string
	names      []string // root names; 0 is ""
	nameIdx    map[string]uint32
	statics    []staticRoot
	stackIDs   map[uint64]string
	cwt        uint64
	com        uint64

	// Next expected Index per bulk kind, and the events missing.
	nextNode, nextEdge, nextRoot uint32
	lostNode, lostEdge, lostRoot uint32
	edgesAnnounced               uint64

	// staticFields: the static fields the modules declare, by name
	// (NameStatics).
	staticFields map[string][]clrmeta.StaticField

	nodeBuf []clrevents.HeapNode
	edgeBuf []clrevents.HeapEdge
	rootBuf []clrevents.HeapRoot
}

type staticRoot struct {
	obj, typeID uint64
	field       string
	thread      bool
}

const (
	waiting = iota
	dumping
	done
)

// NewBuilder returns a builder for a stream with header hdr. onDone (may
// be nil) is called once, when the dump's GC has ended: a live session
// can then be stopped (the rundown that names stack roots' methods still
// arrives).
func NewBuilder(hdr *nettrace.Header, onDone func()) *Builder {
	b := &Builder{hdr: hdr, ptr: hdr.PointerSize, onDone: onDone,
		typeOf: map[uint64]uint32{}, stackIDs: map[uint64]string{}, names: []string{""}}
	if b.ptr != 4 {
		b.ptr = 8
	}
	return b
}

// MapArrays puts the graph's per-object and per-reference arrays outside
// the Go heap, in mappings freed as soon as each is no longer needed (the
// Graph's own arrays by Graph.Free, or at exit): a command that takes one
// snapshot needs a fraction of the memory the Go heap would. With spill,
// they are shared mappings of temporary files in dir ("": os.TempDir;
// unlinked at once, so removed on exit whatever the way), whose resident
// pages go back to the page cache at the end of each phase: the process
// keeps only the working set of the phase it is in. Call it before the
// events.
//
// budget (spill only; 0: none) bounds the process's resident memory: past
// it, the spilled pages go back to the page cache at once, mid-phase.
//
// Without spill, they still spill when the graph would not fit: when the
// dump has been read, if what building and analysing it needs (estimated
// from its objects and references) exceeds half the memory the system
// has available, the arrays move to files (at the same addresses), with
// a budget of a quarter of that memory.
func (b *Builder) MapArrays(spill bool, dir string, budget int64) {
	b.mem = newStore(spill, dir)
	b.autoSpill = !spill
	b.mem.Watch(budget)
	b.addrs = newVec[uint64](b.mem, maxElems)
	b.sizes = newVec[uint64](b.mem, maxElems)
	b.types = newVec[uint32](b.mem, maxElems)
	b.nedges = newVec[uint32](b.mem, maxElems+2)
	b.edges = newVec[byte](b.mem, maxElems*binary.MaxVarintLen64)
}

// Wants reports whether an event of m is one the builder reads (a file
// reader skips the others). The dump GC's suspension is not among them:
// the Set's pause analysis pairs it (Stopped).
func Wants(m *nettrace.Metadata) bool {
	switch m.Runtime {
	case nettrace.Runtime:
		switch m.EventID {
		case clrevents.IDGCStart, clrevents.IDGCEnd, clrevents.IDBulkType,
			clrevents.IDGCBulkNode, clrevents.IDGCBulkEdge, clrevents.IDGCBulkRootEdge, clrevents.IDGCBulkRootCWTEdge,
			clrevents.IDGCBulkRootStaticVar, clrevents.IDGCBulkRCW, clrevents.IDGCBulkRootCCW, clrevents.IDMethodLoadVerbose, clrevents.IDModuleLoad:
			return true
		}
	case nettrace.Rundown:
		switch m.EventID {
		case clrevents.IDRundownMethodDCStartVerbose, clrevents.IDRundownMethodDCEndVerbose, clrevents.IDRundownModuleDCStart, clrevents.IDRundownModuleDCEnd:
			return true
		}
	}
	return false
}

// KnownTypes gives the builder names of types by TypeID, for the types
// whose BulkType the runtime does not send: it logs each type once and
// forgets what it logged only when its Type keyword is turned off, which
// (measured on .NET 10) does not happen while another session stays open
// on the runtime's provider: a second snapshot of a process clrspy serve
// monitors describes objects of types it never names. A daemon keeps the
// names of a process's earlier snapshots (NamedTypes) for its next (a
// TypeID is a MethodTable's address: stable while the type is loaded).
// Call it before the events.
func (b *Builder) KnownTypes(names map[uint64]string) { b.known = names }

// NamedTypes returns the TypeIDs named so far (by BulkType events or
// KnownTypes) and their names.
func (b *Builder) NamedTypes() map[uint64]string {
	m := make(map[uint64]string, len(b.typeIDs)+len(b.known))
	for id, name := range b.known {
		m[id] = name
	}
	for i, id := range b.typeIDs {
		if b.typeNames[i] != "" {
			m[id] = b.typeNames[i]
		}
	}
	return m
}

// Stopped implements analysis.StoppedObserver: the dump GC's stop, paired
// by the pause analysis of the builder's Set (gcpause, registered before
// it), is the snapshot's pause.
func (b *Builder) Stopped(s *analysis.Stopped) {
	if b.state != waiting && s.GC == b.gc && b.pause == 0 {
		b.pause = s.EndNanos - s.BeginNanos
		b.stoppedAt = s.BeginNanos
	}
}

// Stats reports the events used and the decode errors.
func (b *Builder) Stats() analysis.Stats { return b.stats }

// Dumped reports whether the stream held a heap dump (its GC started and
// described objects).
func (b *Builder) Dumped() bool { return len(b.addrs.s) > 0 }

// Event feeds one event.
func (b *Builder) Event(ev *nettrace.Event) {
	m := ev.Meta
	if m.Runtime == nettrace.Rundown {
		switch m.EventID {
		case clrevents.IDRundownMethodDCStartVerbose, clrevents.IDRundownMethodDCEndVerbose:
			b.method(ev)
		case clrevents.IDRundownModuleDCStart, clrevents.IDRundownModuleDCEnd:
			b.module(ev)
		}
		return
	}
	if m.Runtime != nettrace.Runtime {
		return
	}
	p, v := ev.Payload, m.Version
	switch m.EventID {
	case clrevents.IDGCStart:
		g, err := clrevents.DecodeGCStart(p, v, b.ptr)
		if b.stats.Failed(err) {
			return
		}
		b.stats.Used()
		// dotnet-gcdump's rule: the first blocking gen2 GC (the one
		// GCHeapCollect induced).
		if b.state == waiting && g.Depth == 2 && g.Type != clrevents.GCBackground {
			b.state, b.gc = dumping, g.Count
			b.startedAt = b.hdr.Nanos(ev.Timestamp)
		}
	case clrevents.IDGCEnd:
		g, err := clrevents.DecodeGCEnd(p, v, b.ptr)
		if b.stats.Failed(err) {
			return
		}
		b.stats.Used()
		if b.state == dumping && g.Count == b.gc {
			if len(b.addrs.s) == 0 {
				// A gen2 GC without a walk: wait for the next one.
				b.state = waiting
				return
			}
			b.state, b.end = done, ev.Timestamp
			if b.onDone != nil {
				b.onDone()
			}
		}
	case clrevents.IDBulkType:
		bt, err := clrevents.DecodeBulkType(p, v, b.ptr)
		if b.stats.Failed(err) {
			return
		}
		b.stats.Used()
		for _, t := range bt.Types {
			if i, ok := b.typeOf[t.TypeID]; ok {
				if b.typeNames[i] == "" {
					b.typeNames[i], b.typeMods[i] = t.Name, t.ModuleID
				}
				continue
			}
			b.typeOf[t.TypeID] = uint32(len(b.typeNames))
			b.typeNames = append(b.typeNames, t.Name)
			b.typeIDs = append(b.typeIDs, t.TypeID)
			b.typeMods = append(b.typeMods, t.ModuleID)
		}
	case clrevents.IDMethodLoadVerbose:
		b.method(ev)
	case clrevents.IDModuleLoad:
		b.module(ev)
	}
	if b.state != dumping {
		return
	}
	switch m.EventID {
	case clrevents.IDGCBulkNode:
		var idx uint32
		var err error
		b.nodeBuf, idx, err = clrevents.AppendBulkNodes(b.nodeBuf[:0], p, v, b.ptr)
		if b.stats.Failed(err) {
			b.lostNode++
			return
		}
		b.stats.Used()
		b.lostNode += gap(&b.nextNode, idx)
		for i := range b.nodeBuf {
			n := &b.nodeBuf[i]
			b.addrs.push(n.Address)
			b.sizes.push(n.Size)
			b.types.push(b.typeIndex(n.TypeID))
			ec := n.EdgeCount
			if ec > 1<<31 {
				ec = 1 << 31 // hostile: the edges cannot be there
			}
			b.nedges.push(uint32(ec))
			b.edgesAnnounced += ec
		}
		b.mem.wrote(int64(len(b.nodeBuf)) * 24)
	case clrevents.IDGCBulkEdge:
		var idx uint32
		var err error
		b.edgeBuf, idx, err = clrevents.AppendBulkEdges(b.edgeBuf[:0], p, v, b.ptr)
		if b.stats.Failed(err) {
			b.lostEdge++
			return
		}
		b.stats.Used()
		b.lostEdge += gap(&b.nextEdge, idx)
		n0 := len(b.edges.s)
		for i := range b.edgeBuf {
			b.pushEdge(b.edgeBuf[i].Target)
		}
		b.mem.wrote(int64(len(b.edges.s) - n0))
	case clrevents.IDGCBulkRootEdge:
		var idx uint32
		var err error
		b.rootBuf, idx, err = clrevents.AppendBulkRoots(b.rootBuf[:0], p, v, b.ptr)
		if b.stats.Failed(err) {
			b.lostRoot++
			return
		}
		b.stats.Used()
		b.lostRoot += gap(&b.nextRoot, idx)
		for _, r := range b.rootBuf {
			if r.Object == 0 || r.Flags&clrevents.RootFlagWeakRef != 0 {
				continue // weak references keep nothing alive
			}
			k := RootOther
			switch {
			case r.Flags&clrevents.RootFlagRefCounted != 0:
				k = RootRefCounted
			case r.Kind == clrevents.RootKindStack:
				k = RootStack
				if _, ok := b.stackIDs[r.ID]; !ok && r.ID != 0 {
					b.stackIDs[r.ID] = ""
				}
			case r.Kind == clrevents.RootKindFinalizer:
				k = RootFinalizer
			case r.Kind == clrevents.RootKindHandle && r.Flags&clrevents.RootFlagPinning != 0:
				k = RootPinnedHandle
			case r.Kind == clrevents.RootKindHandle:
				k = RootHandle
			}
			b.roots = append(b.roots, rawRoot{obj: r.Object, id: r.ID, kind: k})
		}
	case clrevents.IDGCBulkRootCWTEdge:
		c, err := clrevents.DecodeBulkCWTEdge(p, v, b.ptr)
		if b.stats.Failed(err) {
			return
		}
		b.stats.Used()
		for _, e := range c.Edges {
			if e.Key != 0 && e.Value != 0 {
				b.roots = append(b.roots, rawRoot{obj: e.Value, id: e.Key, kind: RootDependent})
				b.cwt++
			}
		}
	case clrevents.IDGCBulkRootStaticVar:
		s, err := clrevents.DecodeBulkStaticVar(p, v, b.ptr)
		if b.stats.Failed(err) {
			return
		}
		b.stats.Used()
		for _, st := range s.Statics {
			if st.Object == 0 {
				continue
			}
			b.statics = append(b.statics, staticRoot{obj: st.Object, typeID: st.TypeID, field: st.Field, thread: st.Flags&clrevents.StaticFlagThreadLocal != 0})
		}
	case clrevents.IDGCBulkRCW, clrevents.IDGCBulkRootCCW:
		c, err := clrevents.DecodeBulkCOM(p, v, b.ptr)
		if b.stats.Failed(err) {
			return
		}
		b.stats.Used()
		b.com += uint64(c.Count)
	}
}

// pushEdge appends an edge's target address to edges (zigzag varint of
// the difference from the previous one).
func (b *Builder) pushEdge(a uint64) {
	d := a - b.lastEdge
	if cap(b.edges.s)-len(b.edges.s) < binary.MaxVarintLen64 {
		b.edges.grow()
	}
	b.edges.s = binary.AppendUvarint(b.edges.s, d<<1^uint64(int64(d)>>63))
	b.lastEdge = a
	b.nEdges++
}

// edgeReader reads edges back in order.
type edgeReader struct {
	buf  []byte
	pos  int
	last uint64
}

// next is the next edge's target address.
func (r *edgeReader) next() uint64 {
	z, n := binary.Uvarint(r.buf[r.pos:])
	r.pos += n
	r.last += z>>1 ^ -(z & 1)
	return r.last
}

// gap advances the expected Index and returns how many events were
// skipped (a restart at 0, as each server GC heap may, is not a gap).
func gap(next *uint32, idx uint32) uint32 {
	var lost uint32
	if idx > *next {
		lost = idx - *next
	}
	*next = idx + 1
	return lost
}

// typeIndex is the index of a TypeID, named later if its BulkType has not
// come yet.
func (b *Builder) typeIndex(id uint64) uint32 {
	// Neighbours are often of one type (an array's elements, an object
	// and its parts): one map lookup per run of them.
	if id == b.lastTypeID && b.lastTypeOK {
		return b.lastType
	}
	if i, ok := b.typeOf[id]; ok {
		b.lastTypeID, b.lastType, b.lastTypeOK = id, i, true
		return i
	}
	i := uint32(len(b.typeNames))
	b.typeOf[id] = i
	b.typeNames = append(b.typeNames, "")
	b.typeIDs = append(b.typeIDs, id)
	b.typeMods = append(b.typeMods, 0)
	return i
}

// module remembers a module's IL path, to name the types' modules in a
// written .gcdump.
func (b *Builder) module(ev *nettrace.Event) {
	m, err := clrevents.DecodeModule(ev.Payload, ev.Meta.Version, b.ptr)
	if b.stats.Failed(err) {
		return
	}
	b.stats.Used()
	if b.modules == nil {
		b.modules = map[uint64]string{}
	}
	if m.ILPath != "" {
		b.modules[m.ModuleID] = m.ILPath
	}
}

// method names the frames of stack roots: their GCRootID is the frame's
// MethodDesc, the MethodID of the method events (the rundown names every
// compiled method). Only methods some stack root names are decoded.
func (b *Builder) method(ev *nettrace.Event) {
	if len(b.stackIDs) == 0 || len(ev.Payload) < 8 {
		return
	}
	c := nettrace.NewCursor(ev.Payload)
	id := c.U64()
	name, ok := b.stackIDs[id]
	if !ok || name != "" {
		return
	}
	m, err := clrevents.DecodeMethodVerbose(ev.Payload, ev.Meta.Version, b.ptr)
	if b.stats.Failed(err) {
		return
	}
	b.stats.Used()
	if m.Namespace != "" {
		b.stackIDs[id] = m.Namespace + "." + m.Name
	} else {
		b.stackIDs[id] = m.Name
	}
}

// spillIfTooBig moves the collected arrays to files when building and
// analysing the graph would need more than half the available memory:
// about 52 bytes per object and 16 per reference at the peak (the arrays
// of the nodes, the CSR graph, the raw references, the dominator
// arrays).
func (b *Builder) spillIfTooBig() error {
	if !b.autoSpill || b.mem == nil {
		return nil
	}
	b.autoSpill = false
	need := 52*int64(len(b.addrs.s)) + 16*int64(b.nEdges)
	avail := memAvailable()
	if avail <= 0 || need <= avail/2 {
		return nil
	}
	for _, err := range []error{spillVec(&b.addrs), spillVec(&b.sizes), spillVec(&b.types), spillVec(&b.nedges), spillVec(&b.edges)} {
		if err != nil {
			return err
		}
	}
	b.mem.Watch(avail / 4)
	return nil
}

// Spec is the builder in an analysis.Set. The snapshot's pause comes from
// the Set's pause analysis (gcpause.In, registered before the builder),
// which pairs the dump GC's stop (Stopped).
var Spec = analysis.Spec{Name: "heapgraph", Keep: Wants}
