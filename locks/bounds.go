package locks

import (
	"math/bits"

	"github.com/clrspy/clrspy/stacks"
)

// The analyzer's per-thread state is bounded, so a process that makes
// threads without end (600,000 measured: 677 MB before) keeps it flat:
// waiting threads past Options.MaxThreads share one "[other threads]"
// entry, a lock's owners past maxOwners one "[other threads]" owner, and
// the thread tables that resolve owners keep the most recent threads.
const (
	// DefaultMaxThreads bounds the waiting threads kept apart.
	DefaultMaxThreads = 1 << 14
	// maxOwners bounds the owners kept apart per lock.
	maxOwners = 1 << 10
	// maxThreadFacts bounds each thread table (ids seen, Thread objects,
	// managed ids); the oldest entries go first.
	maxThreadFacts = 1 << 16
	// maxSamples bounds the (stack, lock, thread) samples of the contention
	// profile; past it new triples share their thread as FoldedThreadID.
	maxSamples = 1 << 18
)

// Folded threads share this id and name (the profiler's).
const (
	FoldedThreadID   = stacks.FoldedThreadID
	FoldedThreadName = stacks.FoldedThreadName
)

// fifoMap is a map that keeps at most max entries, forgetting the oldest
// inserted first.
type fifoMap[K comparable, V any] struct {
	m     map[K]V
	order []K
	next  int
	max   int
}

func newFIFOMap[K comparable, V any](max int) *fifoMap[K, V] {
	return &fifoMap[K, V]{m: make(map[K]V), max: max}
}

func (f *fifoMap[K, V]) set(k K, v V) {
	if _, ok := f.m[k]; !ok {
		if len(f.order) < f.max {
			f.order = append(f.order, k)
		} else {
			delete(f.m, f.order[f.next])
			f.order[f.next] = k
			f.next = (f.next + 1) % f.max
		}
	}
	f.m[k] = v
}

func (f *fifoMap[K, V]) get(k K) (V, bool) {
	v, ok := f.m[k]
	return v, ok
}

// foldThread is tid, or FoldedThreadID once MaxThreads waiting threads are
// kept apart.
func (a *Analyzer) foldThread(tid uint64) uint64 {
	if _, ok := a.threads[tid]; ok || len(a.threads) < a.maxThreads {
		return tid
	}
	a.foldedWaits++
	return FoldedThreadID
}

// addrMap is fifoMap for the object addresses (address → type id), the
// analyzer's largest table: maxObjects entries were a Go map plus its
// order, 15 MB on a 1 GiB trace. Here the entries are the order itself,
// a ring of 16-byte (address, type) pairs, and the hash index holds ring
// positions (4 bytes a slot, linear probing, at most half full): 6 MB.
type addrMap struct {
	ring  []addrEntry // in insertion order from next, oldest first once full
	next  int         // the oldest entry, once the ring is full
	max   int
	index []int32 // ring position + 1; 0 is empty
	shift uint    // 64 - log2(len(index))
}

type addrEntry struct{ addr, v uint64 }

func newAddrMap(max int) *addrMap {
	return &addrMap{max: max}
}

func (m *addrMap) home(addr uint64) int { return int((addr * 0x9e3779b97f4a7c15) >> m.shift) }

// find is the index slot of addr, or of the empty slot where it would go.
func (m *addrMap) find(addr uint64) int {
	mask := len(m.index) - 1
	for i := m.home(addr); ; i = (i + 1) & mask {
		if p := m.index[i]; p == 0 || m.ring[p-1].addr == addr {
			return i
		}
	}
}

func (m *addrMap) get(addr uint64) (uint64, bool) {
	if len(m.index) == 0 {
		return 0, false
	}
	if p := m.index[m.find(addr)]; p != 0 {
		return m.ring[p-1].v, true
	}
	return 0, false
}

func (m *addrMap) set(addr, v uint64) {
	if len(m.ring) < m.max && 2*(len(m.ring)+1) > len(m.index) {
		m.grow()
	}
	i := m.find(addr)
	if p := m.index[i]; p != 0 {
		m.ring[p-1].v = v
		return
	}
	if len(m.ring) < m.max {
		m.ring = append(m.ring, addrEntry{addr, v})
		m.index[i] = int32(len(m.ring))
		return
	}
	// Forget the oldest entry and take its place in the ring.
	pos := m.next
	m.remove(m.find(m.ring[pos].addr))
	m.ring[pos] = addrEntry{addr, v}
	m.index[m.find(addr)] = int32(pos + 1)
	m.next = (pos + 1) % m.max
}

// remove empties index slot i, moving later entries of its probe run back
// so that every entry stays reachable from its home slot.
func (m *addrMap) remove(i int) {
	mask := len(m.index) - 1
	for j := (i + 1) & mask; m.index[j] != 0; j = (j + 1) & mask {
		h := m.home(m.ring[m.index[j]-1].addr)
		// The entry at j may fill i unless its home lies cyclically in (i, j].
		if (j > i && (h <= i || h > j)) || (j < i && h <= i && h > j) {
			m.index[i] = m.index[j]
			i = j
		}
	}
	m.index[i] = 0
}

// grow doubles the index (it starts small: most traces sample few objects).
func (m *addrMap) grow() {
	n := max(2*len(m.index), 64)
	m.index = make([]int32, n)
	m.shift = uint(64 - bits.TrailingZeros(uint(n)))
	for p := range m.ring {
		m.index[m.find(m.ring[p].addr)] = int32(p + 1)
	}
}
