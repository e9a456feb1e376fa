package stacks

import (
	"encoding/binary"
	"math"

	"github.com/clrspy/clrspy/clrevents"
)

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
// to it, and the header array stays in cache where the runs do not (this
// was 28 % of `clrspy report`'s time). The earlier runs are varints, the
// bin as the distance from the previous run's then the count: ~3 bytes a
// run where two int32 slices took 8 and, grown by appending and halved by
// coarsen, twice that (the largest part of `clrspy report`'s memory).
type tlSeries struct {
	runs      []byte
	prev      int32 // bin of the last run in runs (0 before the first)
	last      int32
	lastCount int32
}

// settle moves the latest run into runs.
func (sr *tlSeries) settle() {
	if sr.lastCount > 0 {
		sr.runs = binary.AppendUvarint(sr.runs, uint64(sr.last-sr.prev))
		sr.runs = binary.AppendUvarint(sr.runs, uint64(uint32(sr.lastCount)))
		sr.prev, sr.lastCount = sr.last, 0
	}
}

// each calls f for every run of runs, in bin order.
func (sr *tlSeries) each(f func(bin, count int32)) {
	bin := int32(0)
	for r := 0; r < len(sr.runs); {
		d, n := binary.Uvarint(sr.runs[r:])
		r += n
		c, n := binary.Uvarint(sr.runs[r:])
		r += n
		bin += int32(d)
		f(bin, int32(uint32(c)))
	}
}

// halve merges the runs into bins twice as wide, in place (a merged run
// never takes more bytes than the runs it replaces, and is written after
// they are read), the latest run back in the header. It returns the runs
// kept.
func (sr *tlSeries) halve() int {
	sr.settle()
	if len(sr.runs) == 0 {
		return 0
	}
	var (
		w, n          int
		prevOut       int32
		cur, curCount int32
		have          bool
	)
	emit := func() {
		w += binary.PutUvarint(sr.runs[w:], uint64(cur-prevOut))
		w += binary.PutUvarint(sr.runs[w:], uint64(uint32(curCount)))
		prevOut = cur
	}
	sr.each(func(bin, count int32) {
		h := bin / 2
		if have && h == cur {
			curCount += count
			return
		}
		if have {
			emit()
		}
		cur, curCount, have = h, count, true
		n++
	})
	sr.runs = sr.runs[:w]
	sr.prev, sr.last, sr.lastCount = prevOut, cur, curCount
	return n
}

// Bin is one time bin of a raw stack's samples.
type Bin struct {
	Index int32 // the bin covers [Index*BinNanos, (Index+1)*BinNanos) since the session start
	Count int32 // samples in it
}

// DefaultTimelineRuns bounds a Timeline to a few MB (a run takes 2 to 10
// bytes, typically 3).
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
		t.runs += t.series[i].halve()
	}
}

// Runs is the number of runs kept.
func (t *Timeline) Runs() int { return t.runs }

// Each calls f for every raw stack with samples, in raw stack order, with
// its bins in time order. The slice is reused between calls.
func (t *Timeline) Each(f func(stack int32, external bool, bins []Bin)) {
	var buf []Bin
	for k := range t.series {
		if t.series[k].lastCount == 0 {
			continue
		}
		buf = t.AppendBins(buf[:0], int32(k/2), k%2 == 1)
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
	sr.each(func(bin, count int32) { dst = append(dst, Bin{bin, count}) })
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
		sr.each(func(bin, count int32) {
			if b := int64(bin); b >= lo && b < hi {
				n += int64(count)
			}
		})
		if n > 0 {
			f(int32(k/2), k%2 == 1, n)
		}
	}
}

// WithSamples is p, a profile of b's from ResultStacks, with the samples
// t counted: one per raw stack, its count over every bin, named by
// b.StackOf (the Samples a Result would hold, summed by stack: threads are
// not told apart). For a caller that needs the samples after all (the
// report page's findings: triage.TopLeafMethods).
func (t *Timeline) WithSamples(b *Builder, p *Profile) *Profile {
	q := *p
	q.Samples = nil
	t.Each(func(id int32, external bool, bins []Bin) {
		var n int64
		for _, x := range bins {
			n += int64(x.Count)
		}
		typ := clrevents.SampleManaged
		if external {
			typ = clrevents.SampleExternal
		}
		q.Samples = append(q.Samples, Sample{Stack: b.StackOf(id, external), Type: typ, Count: n})
	})
	return &q
}
