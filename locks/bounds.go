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

// FoldedLockID is the id of the "[other locks]" entry past Options.MaxLocks;
// FoldedStackFrame names the "[other stacks]" stack past Options.MaxStacks.
const (
	FoldedLockID     = ^uint64(0)
	FoldedStackFrame = "[other stacks]"
)

// fifoMap is a map that keeps at most max entries, forgetting the oldest
// inserted first.
type fifoMap[K comparable, V any] struct {
	m         map[K]V
	order     []K
	next      int
	max       int
	evictions int // entries forgotten so far
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
			f.evictions++
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

// seenThreads is the front of osThreads for the thread of every event: a
// direct-mapped cache of ids known to be in it, emptied whenever osThreads
// forgets one, so that samples of 64 threads in turn cost a load each,
// not two map operations (2.3 s of 21 on a 1 GiB trace's report).
type seenThreads struct {
	ids       [256]uint64 // id+1; 0 is empty
	evictions int         // osThreads' evictions when the cache was emptied
}

func (a *Analyzer) sawThread(tid uint64) {
	s := &a.seen
	if s.evictions != a.osThreads.evictions {
		s.ids, s.evictions = [256]uint64{}, a.osThreads.evictions
	}
	i := (tid * 0x9e3779b97f4a7c15) >> 56
	if s.ids[i] == tid+1 {
		return
	}
	a.osThreads.set(tid, true)
	s.ids[i] = tid + 1
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
// positions and the high half of each address's hash (8 bytes a slot,
// linear probing, at most half full): 8 MB. With the hash in the index a
// probe reads the ring only for the address it looks for, and removing
// the oldest entry never does: a set on a full map cost 740 ns, six cache
// misses, with ring positions alone.
type addrMap struct {
	ring  []addrEntry // in insertion order from next, oldest first once full
	next  int         // the oldest entry, once the ring is full
	max   int
	index []uint64 // hash>>32<<32 | ring position + 1; 0 is empty
	shift uint     // 64 - log2(len(index)), at least 32
}

type addrEntry struct{ addr, v uint64 }

func newAddrMap(max int) *addrMap {
	return &addrMap{max: max}
}

func addrHash(addr uint64) uint64 { return (addr * 0x9e3779b97f4a7c15) &^ (1<<32 - 1) }

// home is the first slot of a hash's probe run.
func (m *addrMap) home(h uint64) int { return int(h >> m.shift) }

// find is the index slot of addr, or of the empty slot where it would go.
func (m *addrMap) find(addr uint64) int {
	h := addrHash(addr)
	mask := len(m.index) - 1
	for i := m.home(h); ; i = (i + 1) & mask {
		s := m.index[i]
		if s == 0 || s&^(1<<32-1) == h && m.ring[uint32(s)-1].addr == addr {
			return i
		}
	}
}

func (m *addrMap) get(addr uint64) (uint64, bool) {
	if len(m.index) == 0 {
		return 0, false
	}
	if s := m.index[m.find(addr)]; s != 0 {
		return m.ring[uint32(s)-1].v, true
	}
	return 0, false
}

func (m *addrMap) set(addr, v uint64) {
	if len(m.ring) < m.max && 2*(len(m.ring)+1) > len(m.index) {
		m.grow()
	}
	i := m.find(addr)
	if s := m.index[i]; s != 0 {
		m.ring[uint32(s)-1].v = v
		return
	}
	if len(m.ring) < m.max {
		m.ring = append(m.ring, addrEntry{addr, v})
		m.index[i] = addrHash(addr) | uint64(len(m.ring))
		return
	}
	// Forget the oldest entry and take its place in the ring.
	pos := m.next
	m.remove(m.find(m.ring[pos].addr))
	m.ring[pos] = addrEntry{addr, v}
	m.index[m.find(addr)] = addrHash(addr) | uint64(pos+1)
	m.next = (pos + 1) % m.max
}

// remove empties index slot i, moving later entries of its probe run back
// so that every entry stays reachable from its home slot.
func (m *addrMap) remove(i int) {
	mask := len(m.index) - 1
	for j := (i + 1) & mask; m.index[j] != 0; j = (j + 1) & mask {
		h := m.home(m.index[j])
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
	m.index = make([]uint64, n)
	m.shift = uint(64 - bits.TrailingZeros(uint(n)))
	for p := range m.ring {
		a := m.ring[p].addr
		m.index[m.find(a)] = addrHash(a) | uint64(p+1)
	}
}
