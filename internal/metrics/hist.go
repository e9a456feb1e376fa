package metrics

import (
	"maps"
	"math"
	"sort"
	"sync"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/locks"
)

// seconds are a histogram's bounds and sum in seconds, as both
// expositions write them.
func seconds(h *analysis.Histogram) (bounds []float64, sum float64) {
	bounds = make([]float64, len(h.UpperNanos))
	for i, v := range h.UpperNanos {
		bounds[i] = float64(v) / 1e9
	}
	return bounds, float64(h.SumNanos) / 1e9
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

// acc fills a classic histogram (Prometheus' rule: a value equal to a
// bound counts in the bucket it closes) and a native one over the same
// values.
type acc struct {
	h      analysis.Histogram
	zero   uint64
	native map[int]int64
}

func newAcc(boundsNanos []int64) *acc {
	return &acc{h: analysis.NewHistogram(boundsNanos, false), native: make(map[int]int64)}
}

func (a *acc) add(nanos int64) {
	nanos = max(nanos, 0)
	a.h.Add(nanos)
	if v := float64(nanos) / 1e9; v <= nativeZero {
		a.zero++
	} else {
		a.native[nativeKey(v)]++
	}
}

// hist copies the histograms out.
func (a *acc) hist() (analysis.Histogram, *Native) {
	return a.h.Clone(), &Native{Schema: nativeSchema, ZeroThreshold: nativeZero, Zero: a.zero, Buckets: maps.Clone(a.native)}
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

// NewGCHistograms returns empty histograms: pauses in gcpause.PauseBounds
// (100 µs to 10 s), times to suspend in suspendBounds.
func NewGCHistograms() *GCHistograms {
	return &GCHistograms{suspend: newAcc(suspendBounds)}
}

// suspendBounds are 10 µs to 10 s: a suspension usually takes
// microseconds (the lock waits' scale).
var suspendBounds = locks.WaitBounds

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
		a = newAcc(gcpause.PauseBounds)
		h.pause[gen][typ] = a
	}
	a.add(g.PauseNanos)
	h.suspend.add(g.SuspendNanos)
}

var genNames = [5]string{"gen0", "gen1", "gen2", "loh", "poh"}

// pauses calls f for every (generation, type) seen, in order.
func (h *GCHistograms) pauses(f func(gen, typ string, hh analysis.Histogram, n *Native)) {
	h.mu.Lock()
	type item struct {
		gen, typ int
		h        analysis.Histogram
		n        *Native
	}
	var items []item
	for g := range h.pause {
		for t, a := range h.pause[g] {
			if a != nil {
				hh, n := a.hist()
				items = append(items, item{g, t, hh, n})
			}
		}
	}
	h.mu.Unlock()
	for _, it := range items {
		f(genNames[it.gen], clrevents.GCType(it.typ).String(), it.h, it.n)
	}
}

func (h *GCHistograms) suspendHist() (analysis.Histogram, *Native) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.suspend.hist()
}
