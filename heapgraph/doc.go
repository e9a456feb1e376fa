// Package heapgraph builds the object graph of a heap snapshot (the
// runtime's heap dump: GCBulkNode, GCBulkEdge, root, static and type
// events of the gen2 GC a session with GCHeapCollect|GCHeapDump induces)
// and answers what keeps memory alive: types by count, own and retained
// bytes (dominator tree over a virtual root joined to every GC root),
// the shortest paths from roots to a type or an object, the dominator
// tree itself, and the difference between two snapshots.
//
// Memory is bounded by compact arrays, not by Go objects: nodes are
// 32-bit ids in the order the runtime described them, with parallel
// arrays of address, size and type; references are CSR adjacency (an
// offset per node into one array of target ids); an address is found by
// binary search in the runs of ids the runtime described in address
// order (one per heap region), or else in the ids sorted by address. The
// dominator tree is computed by the iterative semi-NCA algorithm (no
// recursion), in a few 32-bit arrays per node. With Builder.MapArrays
// these arrays live outside the Go heap, each freed when its phase ends,
// and optionally spilled to unlinked temporary files whose pages go back
// to the page cache past a resident budget (mem_linux.go). A large graph
// (2 M objects and more) kept in memory parks each long-lived array
// (addresses, sizes, types, references, retained bytes, dominators) in
// such a file once it is built, in the background, and hands its pages
// back at each phase's end: a phase holds only what it touches and its
// own temporaries. The read keeps the references' target addresses as
// zigzag varint differences (1-3 bytes each, not 8).
//
// Lost events never make a silent partial graph: a gap in a bulk kind's
// Index, fewer edges than the nodes announced, or an edge to an object
// never described marks the graph incomplete with counts of what is
// missing (Graph.Missing). Objects the reported roots do not reach (their
// root events lost, or kinds the runtime does not report) are joined to
// the virtual root as "unrooted" so every byte is still counted.
//
// A Graph also comes from a .gcdump file (ReadGCDump: PerfView's
// FastSerialization MemoryGraph, as dotnet-gcdump, dotnet-monitor and
// PerfView write it; its root pseudo-nodes become roots of the same
// kinds) and is written as one (WriteGCDump, in dotnet-gcdump's layout,
// so dotnet-gcdump report and PerfView read it). A .gcdump cut in its
// node data or addresses gives the nodes it holds whole, marked cut
// (Missing.FileCut, CutNodes); references to objects it never describes
// (PerfView's UNDEFINED nodes) are counted like lost events' are.
//
// Paths from the roots (Why, and a diff's dominator matching) are path
// groups interned during one breadth-first walk, from the parent's group
// and the object's type: linear in the graph, exact (no hash), a few
// words per group and none per object but its group id. A run of more
// than three objects of one type in a row is one step ("TYPE ×4+"), so a
// long linked list is a few paths, not one per node (paths.go).
//
// A type's retained bytes are exact where computed (the bytes the roots no
// longer reach without the type's objects, one walk per type: Types does
// the top types and more within a time budget) and otherwise the dominator
// tree's lower bound, marked (TypeStat.RetainedExact). Static roots are
// named Class.Field when the caller gives the modules' static fields
// (Builder.NameStatics, from package clrmeta: the events name only the
// field).
//
// The builder is an analysis.Analyzer (events from package source); the
// analyses are pure functions of a Graph; the .gcdump functions take an
// io.Reader or io.Writer.
package heapgraph
