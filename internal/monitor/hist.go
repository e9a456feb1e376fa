package monitor

import (
	"math"
	"slices"
	"sort"
	"strconv"
)

// Histogram is a distribution of durations in fixed logarithmic buckets
// (1-2-5 steps). Counts[i] holds the values v with UpperNanos[i-1] < v <=
// UpperNanos[i] (Prometheus' "le" buckets); the last count, one past
// UpperNanos, holds the values above the last bound.
type Histogram struct {
	UpperNanos []int64  `json:"upper_ns"`
	Counts     []uint64 `json:"counts"`
	Count      uint64   `json:"count"`
	SumNanos   int64    `json:"sum_ns"`
}

// PauseBounds are the pause histograms' bounds: 100 µs to 10 s, as
// clrspy gc's histogram.
var PauseBounds = steps(100_000, 10_000_000_000)

// WaitBounds are the lock-wait histogram's bounds: 10 µs to 10 s.
var WaitBounds = steps(10_000, 10_000_000_000)

func steps(lo, hi int64) []int64 {
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

// hist is a Histogram being filled (counts sized once).
type hist struct {
	bounds []int64
	counts []uint64
	n      uint64
	sum    int64
}

func newHist(bounds []int64) hist { return hist{bounds: bounds, counts: make([]uint64, len(bounds)+1)} }

func (h *hist) add(v int64) {
	i := sort.Search(len(h.bounds), func(i int) bool { return h.bounds[i] >= v })
	h.counts[i]++
	h.n++
	h.sum += v
}

func (h *hist) snapshot() Histogram {
	return Histogram{UpperNanos: slices.Clone(h.bounds), Counts: slices.Clone(h.counts), Count: h.n, SumNanos: h.sum}
}

// Opt is a number the events may not carry: NaN when absent, written as
// JSON null.
type Opt float64

// None is the absent value.
var None = Opt(math.NaN())

// Valid reports whether the value is present.
func (o Opt) Valid() bool { return !math.IsNaN(float64(o)) }

// Or is the value, or def when absent.
func (o Opt) Or(def float64) float64 {
	if o.Valid() {
		return float64(o)
	}
	return def
}

// MarshalJSON writes the number, or null.
func (o Opt) MarshalJSON() ([]byte, error) {
	if !o.Valid() || math.IsInf(float64(o), 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, float64(o), 'g', -1, 64), nil
}

// UnmarshalJSON reads a number or null.
func (o *Opt) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*o = None
		return nil
	}
	f, err := strconv.ParseFloat(string(b), 64)
	*o = Opt(f)
	return err
}

func ms(ns int64) float64 { return float64(ns) / 1e6 }
