package monitor

import ()

// ring keeps the last n values pushed, in a slice allocated once.
type ring[T any] struct {
	buf  []T
	next int
	full bool
}

func newRing[T any](n int) ring[T] { return ring[T]{buf: make([]T, n)} }

func (r *ring[T]) push(v T) {
	r.buf[r.next] = v
	r.next++
	if r.next == len(r.buf) {
		r.next, r.full = 0, true
	}
}

func (r *ring[T]) len() int {
	if r.full {
		return len(r.buf)
	}
	return r.next
}

// slice copies the values out, oldest first.
func (r *ring[T]) slice() []T {
	out := make([]T, 0, r.len())
	if r.full {
		out = append(out, r.buf[r.next:]...)
	}
	return append(out, r.buf[:r.next]...)
}

// allocWindow remembers the gen0 allocation of recent GCs, for a rate.
type allocWindow struct {
	at    [256]int64 // ns, pause end
	bytes [256]uint64
	next  int
	n     int
}

func (a *allocWindow) add(at int64, b uint64) {
	a.at[a.next], a.bytes[a.next] = at, b
	a.next = (a.next + 1) % len(a.at)
	a.n = min(a.n+1, len(a.at))
}

// since sums what GCs after t reported.
func (a *allocWindow) since(t int64) (sum uint64, gcs int) {
	for i := 0; i < a.n; i++ {
		j := (a.next - 1 - i + len(a.at)) % len(a.at)
		if a.at[j] <= t {
			break
		}
		sum += a.bytes[j]
		gcs++
	}
	return sum, gcs
}
