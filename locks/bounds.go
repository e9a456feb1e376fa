package locks

import "github.com/clrspy/clrspy/stacks"

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
