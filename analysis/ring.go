package analysis

// Ring keeps the latest Max values pushed (the oldest goes when full), in
// a slice that grows to Max once and is then reused: a bounded history
// that allocates nothing per value once full. The zero value with Max
// set is ready (NewRing).
type Ring[T any] struct {
	buf     []T
	head, n int // head: the oldest
	Max     int
}

// NewRing returns a ring of at most max values.
func NewRing[T any](max int) Ring[T] { return Ring[T]{Max: max} }

// Push adds v as the newest and returns its slot (valid until Max more
// pushes).
func (r *Ring[T]) Push(v T) *T {
	var i int
	switch {
	case len(r.buf) < r.Max:
		r.buf = append(r.buf, v)
		r.n++
		return &r.buf[len(r.buf)-1]
	case r.n < len(r.buf):
		i = (r.head + r.n) % len(r.buf)
		r.n++
	default:
		i = r.head
		r.head = (r.head + 1) % len(r.buf)
	}
	r.buf[i] = v
	return &r.buf[i]
}

// Len is the number of values kept.
func (r *Ring[T]) Len() int { return r.n }

// At is the i-th oldest value kept; Back the i-th newest.
func (r *Ring[T]) At(i int) *T   { return &r.buf[(r.head+i)%len(r.buf)] }
func (r *Ring[T]) Back(i int) *T { return r.At(r.n - 1 - i) }

// Slice copies the values out, oldest first.
func (r *Ring[T]) Slice() []T {
	out := make([]T, 0, r.n)
	out = append(out, r.buf[r.head:min(r.head+r.n, len(r.buf))]...)
	return append(out, r.buf[:r.n-len(out)]...)
}
