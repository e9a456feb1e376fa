package analysis

import "slices"

// Histogram counts durations (nanoseconds) in fixed buckets. It is
// clrspy's one histogram type: the analyses fill it (gcpause's pauses,
// locks' waits), the live model hands it out in snapshots, and every
// surface renders it (text bars, JSON rows, the terminal's columns,
// Prometheus and OTLP buckets).
//
// Counts has one entry more than UpperNanos: Counts[i] holds the values
// between UpperNanos[i-1] and UpperNanos[i], the last one those above every
// bound. A value equal to a bound counts in the bucket that bound closes,
// (lo, hi] as Prometheus' "le" and OTLP's explicit bounds count, unless
// LowerClosed is set: then in the bucket above, [lo, hi), as the tables of
// clrspy gc and clrspy locks have always labelled theirs ("< 100µs",
// ">= 1s"). The rule only matters for a value equal to a bound to the
// nanosecond.
type Histogram struct {
	UpperNanos  []int64  `json:"upper_ns"`
	Counts      []uint64 `json:"counts"`
	Count       uint64   `json:"count"`
	SumNanos    int64    `json:"sum_ns"`
	LowerClosed bool     `json:"-"`
}

// NewHistogram returns an empty histogram over the ascending bounds upper
// (shared, never modified).
func NewHistogram(upper []int64, lowerClosed bool) Histogram {
	return Histogram{UpperNanos: upper, Counts: make([]uint64, len(upper)+1), LowerClosed: lowerClosed}
}

// Add counts v. It does not allocate.
func (h *Histogram) Add(v int64) {
	i, found := slices.BinarySearch(h.UpperNanos, v)
	if found && h.LowerClosed {
		i++
	}
	h.Counts[i]++
	h.Count++
	h.SumNanos += v
}

// Clone is a deep copy (a live view's snapshot shares nothing with the
// analysis filling h).
func (h Histogram) Clone() Histogram {
	h.UpperNanos = slices.Clone(h.UpperNanos)
	h.Counts = slices.Clone(h.Counts)
	return h
}

// Bucket returns bucket i's bounds: lo is 0 for the first bucket, hi 0
// for the last (open) one.
func (h *Histogram) Bucket(i int) (lo, hi int64) {
	if i > 0 {
		lo = h.UpperNanos[i-1]
	}
	if i < len(h.UpperNanos) {
		hi = h.UpperNanos[i]
	}
	return lo, hi
}

// Steps125 are bounds in 1-2-5 steps from lo to hi (both included when on
// the scale): a logarithmic scale that reads easily.
func Steps125(lo, hi int64) []int64 {
	var b []int64
	for d := lo; d <= hi; d *= 10 {
		for _, m := range []int64{1, 2, 5} {
			if d*m <= hi {
				b = append(b, d*m)
			}
		}
	}
	return b
}
