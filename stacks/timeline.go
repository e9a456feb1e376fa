package stacks

import "math"

// RawSample is one counted sample as Options.OnSample sees it.
type RawSample struct {
	Thread      uint64 // OS thread id
	ThreadIndex int    // index into Profile.Threads
	// Stack is the sample's raw stack: samples with the same instruction
	// pointers (in the same code epoch) share it. StackOf names it.
	Stack int32
	// External is set for a sample taken outside managed code; its stack
	// gets a [native code] leaf.
	External bool
	Nanos    int64 // when, in ns since the session start
	Weight   int64 // the thread time the sample stands for (Sample.Nanos)
}

// StackOf returns the frames (indexes into p.Frames, leaf first) of raw
// stack id as the Profile p that the last Result call returned names them,
// with the [native code] leaf of an external sample. It returns nil for a
// stack first seen after that Result call. The slice must not be changed.
func (b *Builder) StackOf(id int32, external bool) []int32 {
	if id < 0 || int(id) >= len(b.resolved) {
		return nil
	}
	st := b.resolved[id]
	if external && b.nativeFrame >= 0 && (len(st) == 0 || st[0] != b.nativeFrame) {
		return append([]int32{b.nativeFrame}, st...)
	}
	return st
}

// Timeline keeps when samples happened in bounded memory: per raw stack
// (and sample kind), the sample count of every time bin that has one, as
// runs in bin order. When the runs kept exceed the bound, the bins double
// in width and merge, so a session of any length keeps at most MaxRuns
// runs (and a bin stays far below the session's length). Feed it from
// Options.OnSample.
type Timeline struct {
	binNanos int64
	maxRuns  int
	runs     int
	series   []tlSeries // by 2*raw stack id + external
}

// tlSeries is one raw stack's runs. The latest run is kept in the header
// (last, lastCount; none when lastCount is 0): a sample nearly always adds
// to it, and the header array stays in cache where the run slices, one pair
// per stack, do not (this was 28 % of `clrspy report`'s time).
type tlSeries struct {
	bins      []int32 // bin index of each earlier run, ascending
	counts    []int32
	last      int32
	lastCount int32
}

// settle moves the latest run into the slices.
func (sr *tlSeries) settle() {
	if sr.lastCount > 0 {
		sr.bins, sr.counts = append(sr.bins, sr.last), append(sr.counts, sr.lastCount)
		sr.lastCount = 0
	}
}

// unsettle takes the latest run back out of the slices.
func (sr *tlSeries) unsettle() {
	if n := len(sr.bins); n > 0 {
		sr.last, sr.lastCount = sr.bins[n-1], sr.counts[n-1]
		sr.bins, sr.counts = sr.bins[:n-1], sr.counts[:n-1]
	}
}

// Bin is one time bin of a raw stack's samples.
type Bin struct {
	Index int32 // the bin covers [Index*BinNanos, (Index+1)*BinNanos) since the session start
	Count int32 // samples in it
}

// DefaultTimelineRuns bounds a Timeline to about 8 MB.
const DefaultTimelineRuns = 1 << 20

// NewTimeline returns a Timeline of at most maxRuns runs (0: the default)
// with bins of 1 ms to begin with.
func NewTimeline(maxRuns int) *Timeline {
	if maxRuns <= 0 {
		maxRuns = DefaultTimelineRuns
	}
	return &Timeline{binNanos: int64(1e6), maxRuns: maxRuns}
}

// BinNanos is the current bin width.
func (t *Timeline) BinNanos() int64 { return t.binNanos }

// Add records one sample.
func (t *Timeline) Add(s RawSample) {
	k := int(s.Stack) * 2
	if s.External {
		k++
	}
	if k >= len(t.series) {
		t.series = append(t.series, make([]tlSeries, k+1-len(t.series))...)
	}
	bin := int32(min(max(s.Nanos, 0)/t.binNanos, math.MaxInt32))
	sr := &t.series[k]
	if sr.lastCount > 0 && sr.last >= bin {
		// The latest run's bin; or an earlier one: samples arrive in time
		// order per stream, and one out of order (clock skew between
		// capture threads) joins the latest run.
		sr.lastCount++
		return
	}
	sr.settle()
	sr.last, sr.lastCount = bin, 1
	t.runs++
	for t.runs > t.maxRuns && t.binNanos < math.MaxInt64/4 {
		t.coarsen()
	}
}

// coarsen doubles the bin width, merging neighbouring runs.
func (t *Timeline) coarsen() {
	t.binNanos *= 2
	t.runs = 0
	for i := range t.series {
		sr := &t.series[i]
		sr.settle()
		out := 0
		for j := range sr.bins {
			b := sr.bins[j] / 2
			if out > 0 && sr.bins[out-1] == b {
				sr.counts[out-1] += sr.counts[j]
				continue
			}
			sr.bins[out], sr.counts[out] = b, sr.counts[j]
			out++
		}
		sr.bins, sr.counts = sr.bins[:out], sr.counts[:out]
		t.runs += out
		sr.unsettle()
	}
}

// Runs is the number of runs kept.
func (t *Timeline) Runs() int { return t.runs }

// Each calls f for every raw stack with samples, in raw stack order, with
// its bins in time order. The slice is reused between calls.
func (t *Timeline) Each(f func(stack int32, external bool, bins []Bin)) {
	var buf []Bin
	for k := range t.series {
		sr := &t.series[k]
		if sr.lastCount == 0 {
			continue
		}
		buf = buf[:0]
		for j := range sr.bins {
			buf = append(buf, Bin{sr.bins[j], sr.counts[j]})
		}
		buf = append(buf, Bin{sr.last, sr.lastCount})
		f(int32(k/2), k%2 == 1, buf)
	}
}

// AppendBins appends the bins of raw stack id (external or not) to dst,
// in time order: Each's bins of one stack, without the walk.
func (t *Timeline) AppendBins(dst []Bin, id int32, external bool) []Bin {
	k := int(id) * 2
	if external {
		k++
	}
	if id < 0 || k >= len(t.series) || t.series[k].lastCount == 0 {
		return dst
	}
	sr := &t.series[k]
	for j := range sr.bins {
		dst = append(dst, Bin{sr.bins[j], sr.counts[j]})
	}
	return append(dst, Bin{sr.last, sr.lastCount})
}

// Window calls f for every raw stack with samples in [from, to) (ns since
// the session start; bins count when they start in it) with their count.
func (t *Timeline) Window(from, to int64, f func(stack int32, external bool, count int64)) {
	lo, hi := from/t.binNanos, (to+t.binNanos-1)/t.binNanos
	for k := range t.series {
		sr := &t.series[k]
		var n int64
		if sr.lastCount > 0 && int64(sr.last) >= lo && int64(sr.last) < hi {
			n += int64(sr.lastCount)
		}
		for j := len(sr.bins) - 1; j >= 0; j-- {
			b := int64(sr.bins[j])
			if b < lo {
				break
			}
			if b < hi {
				n += int64(sr.counts[j])
			}
		}
		if n > 0 {
			f(int32(k/2), k%2 == 1, n)
		}
	}
}
