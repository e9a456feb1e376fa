package metrics

import (
	"math"
	"slices"
	"sort"
	"sync"

	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/internal/monitor"
)

// Hist is one histogram's state, in seconds: classic buckets (Counts[i]
// holds the values in (Bounds[i-1], Bounds[i]]; the last count, one past
// Bounds, those above the last bound) and, when Native is set, an
// exponential (native) one over the same values.
type Hist struct {
	Bounds []float64
	Counts []uint64
	Count  uint64
	Sum    float64
	Native *Native
}

// Native is a native histogram: Schema s has 2^s buckets per power of two;
// bucket i holds the values in (2^((i-1)/2^s), 2^(i/2^s)]. Zero counts the
// values at or below ZeroThreshold.
type Native struct {
	Schema        int32
	ZeroThreshold float64
	Zero          uint64
	Buckets       map[int]int64
}

// nativeSchema is 8 buckets per power of two (each about 9 % wide), as
// client_golang's default bucket factor of 1.1.
const nativeSchema = 3

// nativeZero is client_golang's default zero threshold (2^-128).
const nativeZero = 2.938735877055719e-39

// nativeBounds[i] = 2^(i/8 - 1): the upper bounds of a power of two's
// buckets, as fractions of math.Frexp.
var nativeBounds = func() []float64 {
	b := make([]float64, 1<<nativeSchema)
	for i := range b {
		b[i] = math.Exp2(float64(i)/float64(len(b)) - 1)
	}
	return b
}()

// nativeKey is the index of the native bucket holding v > 0.
func nativeKey(v float64) int {
	frac, exp := math.Frexp(v)
	return sort.SearchFloat64s(nativeBounds, frac) + (exp-1)*len(nativeBounds)
}

// acc fills a Hist.
type acc struct {
	bounds []float64 // seconds
	counts []uint64
	n      uint64
	sum    float64
	zero   uint64
	native map[int]int64
}

func newAcc(boundsNanos []int64) *acc {
	b := make([]float64, len(boundsNanos))
	for i, v := range boundsNanos {
		b[i] = float64(v) / 1e9
	}
	return &acc{bounds: b, counts: make([]uint64, len(b)+1), native: make(map[int]int64)}
}

func (a *acc) add(nanos int64) {
	v := float64(max(nanos, 0)) / 1e9
	a.counts[sort.SearchFloat64s(a.bounds, v)]++
	a.n++
	a.sum += v
	if v <= nativeZero {
		a.zero++
	} else {
		a.native[nativeKey(v)]++
	}
}

func (a *acc) hist() Hist {
	h := Hist{Bounds: a.bounds, Counts: slices.Clone(a.counts), Count: a.n, Sum: a.sum,
		Native: &Native{Schema: nativeSchema, ZeroThreshold: nativeZero, Zero: a.zero, Buckets: make(map[int]int64, len(a.native))}}
	for k, v := range a.native {
		h.Native.Buckets[k] = v
	}
	return h
}

// fromMonitor converts a monitor histogram (nanoseconds) to a classic Hist.
func fromMonitor(m monitor.Histogram) Hist {
	h := Hist{Bounds: make([]float64, len(m.UpperNanos)), Counts: slices.Clone(m.Counts), Count: m.Count, Sum: float64(m.SumNanos) / 1e9}
	for i, v := range m.UpperNanos {
		h.Bounds[i] = float64(v) / 1e9
	}
	return h
}

// GCHistograms keeps what the monitor's snapshot does not: every complete
// GC's pause by generation and GC type, and its time to suspend, as
// classic and native histograms. Observe it from monitor.Options.OnGC; the
// exporter reads it at scrape time. Safe for concurrent use.
type GCHistograms struct {
	mu      sync.Mutex
	pause   [3][3]*acc // [generation][type]
	suspend *acc
}

// NewGCHistograms returns empty histograms: pauses in monitor.PauseBounds
// (100 µs to 10 s), times to suspend in monitor.WaitBounds (10 µs to 10
// s: a suspension usually takes microseconds).
func NewGCHistograms() *GCHistograms {
	return &GCHistograms{suspend: newAcc(monitor.WaitBounds)}
}

// Observe adds a GC: complete ones whose start the session saw (as the
// monitor's histograms: the pause of a GC begun before the session is a
// lower bound).
func (h *GCHistograms) Observe(g *gcpause.GC) {
	if !g.Complete || !g.StartSeen {
		return
	}
	gen := min(max(g.Generation, 0), 2)
	typ := min(int(g.Type), 2)
	h.mu.Lock()
	defer h.mu.Unlock()
	a := h.pause[gen][typ]
	if a == nil {
		a = newAcc(monitor.PauseBounds)
		h.pause[gen][typ] = a
	}
	a.add(g.PauseNanos)
	h.suspend.add(g.SuspendNanos)
}

// gcTypes are the gc_type label values by clrevents.GCType.
var gcTypes = [3]string{"NonConcurrent", "Background", "Foreground"}

var genNames = [5]string{"gen0", "gen1", "gen2", "loh", "poh"}

// pauses calls f for every (generation, type) seen, in order.
func (h *GCHistograms) pauses(f func(gen, typ string, hh Hist)) {
	h.mu.Lock()
	type item struct {
		gen, typ int
		h        Hist
	}
	var items []item
	for g := range h.pause {
		for t, a := range h.pause[g] {
			if a != nil {
				items = append(items, item{g, t, a.hist()})
			}
		}
	}
	h.mu.Unlock()
	for _, it := range items {
		f(genNames[it.gen], gcTypes[it.typ], it.h)
	}
}

func (h *GCHistograms) suspendHist() Hist {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.suspend.hist()
}
