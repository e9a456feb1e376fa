package memory

import (
	"math"
	"math/rand/v2"
	"sort"
	"strings"
)

// Native allocations sampled by bytes (clrspy memory --native).
//
// The allocator's calls arrive as events (perf's uprobes on malloc,
// calloc, realloc and free and the pointers they return). Which of them
// are sampled is decided per event by a ByteSampler, the way Go's heap
// profile and tcmalloc's do it: the bytes until the next sample are drawn
// from an exponential distribution of mean SampleBytes, and an allocation
// that reaches it is sampled. Sampled points form a Poisson process over
// the allocated bytes, so an allocation of size s is sampled with
// probability p(s) = 1 - exp(-s/SampleBytes), independently of the
// others, and weighing it by 1/p(s) (s/p(s) bytes) makes every estimate
// of counts and bytes unbiased. Native pairs each call's entry with its
// return per thread, keeps the sampled blocks that are still allocated by
// address (a free removes one) and sums by stack what is outstanding at
// the end and what was allocated over the run. It does no I/O.

// ByteSampler decides which allocations are sampled. Not safe for
// concurrent use.
type ByteSampler struct {
	mean float64
	left float64 // bytes until the next sample
	rng  *rand.Rand
}

// NewByteSampler samples on average once every mean bytes (mean <= 1:
// every allocation), drawing from a generator seeded with seed.
func NewByteSampler(mean int64, seed uint64) *ByteSampler {
	s := &ByteSampler{mean: float64(mean), rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	s.left = s.draw()
	return s
}

func (s *ByteSampler) draw() float64 {
	if s.mean <= 1 {
		return 0
	}
	return s.rng.ExpFloat64() * s.mean
}

// Take reports whether an allocation of size bytes is sampled.
func (s *ByteSampler) Take(size uint64) bool {
	if f := float64(size); f < s.left {
		s.left -= f
		return false
	}
	s.left = s.draw()
	return true
}

// Probability is the chance that an allocation of size bytes is sampled.
func (s *ByteSampler) Probability(size uint64) float64 {
	if s.mean <= 1 {
		return 1
	}
	return -math.Expm1(-float64(size) / s.mean)
}

// Weight is what a sampled allocation of size bytes stands for: count
// allocations of bytes in all (1/p and size/p).
func (s *ByteSampler) Weight(size uint64) (count, bytes float64) {
	p := s.Probability(size)
	if p <= 0 {
		// size 0: never sampled unless forced; it stands for itself.
		return 1, float64(size)
	}
	return 1 / p, float64(size) / p
}

// Call is an allocator entry point.
type Call uint8

// The entry points Native follows.
const (
	CallMalloc Call = iota
	CallCalloc
	CallRealloc
)

// NativeStats count what Native saw.
type NativeStats struct {
	Calls    uint64 // entries of malloc, calloc, realloc
	Frees    uint64
	Sampled  uint64 // sampled entries
	Unpaired uint64 // entries without their return, or returns without their entry (lost records, or a thread followed mid-call)
	Failed   uint64 // sampled calls that returned NULL
}

// Native is the accounting of sampled native allocations.
type Native struct {
	sampler *ByteSampler
	calls   map[int][]pendingCall // by thread: the entries waiting for their returns, outermost first
	live    map[uint64]liveBlock
	alloc   map[int32]*nativeSum
	stats   NativeStats
}

type pendingCall struct {
	at      int64 // entry time, ns
	call    Call
	size    uint64
	old     uint64 // realloc's pointer
	stack   int32
	sampled bool
}

type liveBlock struct {
	stack int32
	size  uint64
}

type nativeSum struct{ count, bytes float64 }

// NewNative accounts the allocations sampled by s.
func NewNative(s *ByteSampler) *Native {
	return &Native{sampler: s, calls: make(map[int][]pendingCall), live: make(map[uint64]liveBlock), alloc: make(map[int32]*nativeSum)}
}

// Sampler is the ByteSampler Native weighs its samples with.
func (n *Native) Sampler() *ByteSampler { return n.sampler }

// nestWindow bounds how long an entry waits for its return: an entry
// older than that when the thread enters again lost its return record.
// Calls do nest: glibc's realloc(NULL, n) calls malloc itself, and the
// probe on malloc's code sees it.
const nestWindow = int64(100e6)

// Enter is thread tid's entry into call at time at (ns) asking for size
// bytes (calloc: the product of its arguments; realloc: old is the block
// passed). A sampled entry carries its stack's id; the sampling decision
// is the caller's (the ByteSampler's Take, made where the stack is to be
// had).
func (n *Native) Enter(tid int, call Call, size, old uint64, sampled bool, stack int32, at int64) {
	n.stats.Calls++
	if sampled {
		n.stats.Sampled++
	}
	st := n.calls[tid]
	// Entries too old to be an outer call of this one lost their returns.
	k := 0
	for k < len(st) && at-st[k].at > nestWindow {
		k++
	}
	if k > 0 {
		n.stats.Unpaired += uint64(k)
		st = append(st[:0], st[k:]...)
	}
	if len(st) >= 4 {
		// Deeper than the allocator nests: the oldest lost its return.
		n.stats.Unpaired++
		st = append(st[:0], st[1:]...)
	}
	n.calls[tid] = append(st, pendingCall{at: at, call: call, size: size, old: old, stack: stack, sampled: sampled})
}

// Return is the pointer thread tid's innermost pending call returned. A
// call made inside another (realloc's own malloc) is the outer call's
// business: its block is accounted when the outer one returns.
func (n *Native) Return(tid int, ptr uint64) {
	st := n.calls[tid]
	if len(st) == 0 {
		n.stats.Unpaired++
		return
	}
	c := st[len(st)-1]
	n.calls[tid] = st[:len(st)-1]
	if len(st) > 1 {
		return
	}
	if c.call == CallRealloc && c.old != 0 {
		if ptr == 0 && c.size != 0 {
			if c.sampled {
				n.stats.Failed++
			}
			return // failed: the old block stays
		}
		n.release(c.old)
	}
	if ptr == 0 {
		if c.sampled && c.size != 0 {
			n.stats.Failed++
		}
		return
	}
	// A block at an address still live was freed by a call not seen
	// (a thread not followed yet): the new one replaces it.
	n.release(ptr)
	if !c.sampled {
		return
	}
	n.live[ptr] = liveBlock{stack: c.stack, size: c.size}
	cnt, b := n.sampler.Weight(c.size)
	a := n.alloc[c.stack]
	if a == nil {
		a = &nativeSum{}
		n.alloc[c.stack] = a
	}
	a.count += cnt
	a.bytes += b
}

// Free is a call of free(ptr).
func (n *Native) Free(ptr uint64) {
	n.stats.Frees++
	n.release(ptr)
}

func (n *Native) release(ptr uint64) {
	if ptr != 0 {
		delete(n.live, ptr)
	}
}

// Stacks lists the stack ids Result will name: of the live blocks and
// of every sampled allocation.
func (n *Native) Stacks() []int32 {
	seen := make(map[int32]bool, len(n.alloc))
	for id := range n.alloc {
		seen[id] = true
	}
	for _, b := range n.live {
		seen[b.stack] = true
	}
	ids := make([]int32, 0, len(seen))
	for id := range seen {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// Stats are the counters so far.
func (n *Native) Stats() NativeStats { return n.stats }

// NativeStack is the estimate for one stack: allocations and bytes.
type NativeStack struct {
	Frames []string // leaf first
	Bytes  float64
	Count  float64
}

// NativeResult is what Native found: estimates by stack, most bytes
// first.
type NativeResult struct {
	SampleBytes int64
	Outstanding []NativeStack // sampled blocks not freed, by stack
	Allocated   []NativeStack // every sampled allocation, by stack
	// OutstandingBytes and AllocatedBytes are the totals' estimates.
	OutstandingBytes, AllocatedBytes float64
	Stats                            NativeStats
}

// Result names the stacks with frames (a stack id to its frame names,
// leaf first), merges those that name the same, and keeps the top of
// each list (top <= 0: all).
func (n *Native) Result(frames func(stack int32) []string, top int) NativeResult {
	r := NativeResult{SampleBytes: int64(n.sampler.mean), Stats: n.stats}
	out := make(map[int32]*nativeSum)
	for _, b := range n.live {
		s := out[b.stack]
		if s == nil {
			s = &nativeSum{}
			out[b.stack] = s
		}
		c, by := n.sampler.Weight(b.size)
		s.count += c
		s.bytes += by
	}
	r.Outstanding, r.OutstandingBytes = byName(out, frames, top)
	r.Allocated, r.AllocatedBytes = byName(n.alloc, frames, top)
	return r
}

func byName(m map[int32]*nativeSum, frames func(int32) []string, top int) ([]NativeStack, float64) {
	idx := make(map[string]int)
	var list []NativeStack
	var total float64
	ids := make([]int32, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		s := m[id]
		total += s.bytes
		f := frames(id)
		k := strings.Join(f, "\x00")
		if i, ok := idx[k]; ok {
			list[i].Bytes += s.bytes
			list[i].Count += s.count
			continue
		}
		idx[k] = len(list)
		list = append(list, NativeStack{Frames: f, Bytes: s.bytes, Count: s.count})
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].Bytes > list[j].Bytes })
	if top > 0 && len(list) > top {
		list = list[:top]
	}
	return list, total
}
