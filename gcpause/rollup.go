package gcpause

import (
	"math"
	"slices"
	"sort"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/clrevents"
)

// Rollup summarizes the pauses of a set of complete GCs.
//
// Count, the totals and PausePercent cover every complete GC; MaxNanos,
// MeanNanos, the percentiles and MaxSuspend only those whose start was
// seen (GC.StartSeen): the others' pauses are lower bounds.
type Rollup struct {
	Count   int
	Induced int
	// TotalNanos is the time the runtime was stopped by these GCs, each
	// moment counted once: when the stops of two GCs overlap (a foreground
	// GC suspending while a background GC's stop is on), the overlap is
	// counted once. Per generation, overlaps between GCs of that generation
	// are counted once; a moment stopped by GCs of two generations belongs
	// to both rows, so the rows can add up to more than all.
	TotalNanos int64
	// SumNanos is the sum of the GCs' pauses (PerfView's total); SumNanos −
	// TotalNanos is the time counted twice there.
	SumNanos int64
	// RuntimeNanos is the sum of PauseRuntimeNanos: what these GCs add to
	// GC.GetTotalPauseDuration (which sums, so overlaps count twice).
	RuntimeNanos int64
	// StartUnseen counts the GCs whose start preceded the session.
	StartUnseen  int
	MaxNanos     int64
	MeanNanos    int64
	P50, P90     int64
	P99, P999    int64
	TotalSuspend int64
	MaxSuspend   int64
	// PausePercent is TotalNanos as a share of the session's duration.
	PausePercent float64
	// MaxPeakMB is the largest heap size at a GC's start (-1 unknown).
	MaxPeakMB float64
	// Histogram holds the pauses of the GCs whose start was seen (all
	// buckets, empty ones included; PauseBounds, a pause equal to a bound
	// in the bucket above), SuspendHistogram their times to suspend in the
	// same buckets.
	Histogram        analysis.Histogram
	SuspendHistogram analysis.Histogram
}

// PauseBounds are the pause histograms' bucket edges in nanoseconds: 1-2-5
// steps from 100 µs to 10 s.
var PauseBounds = analysis.Steps125(100_000, 10_000_000_000)

// Result is the analysis of everything handled so far.
type Result struct {
	// GCs in start order (the most recent ones when Options.MaxGCs is
	// set), complete or not.
	GCs []*GC
	// Suspensions lists non-GC suspensions other than SuspendOther.
	Suspensions []*Suspension
	// ByReason aggregates every suspension, GC or not, by reason.
	ByReason []ReasonRollup

	All   Rollup
	ByGen [3]Rollup // generations 0, 1, 2
	// ByType counts complete GCs by type.
	ByType map[clrevents.GCType]int
	// Longest are the longest complete GC pauses, longest first.
	Longest []*GC

	Started    int // GCStart events (GCs) seen
	Complete   int
	Incomplete int // given up or still open
	GivenUp    int // given up (events missing): Incomplete less the open

	SessionNanos      int64 // first to last event
	LostEvents        uint64
	UnmatchedRestarts int
	DecodeErrors      int
}

// rolling accumulates complete GCs incrementally so that a long live
// session keeps only one number per pause.
type rolling struct {
	pauses     [4]dist // per generation 0..2, and [3] all
	stats      [4]Rollup
	union      [4]spanSet
	seenSum    [4]int64 // pauses of the GCs whose start was seen
	byType     map[clrevents.GCType]int
	longest    []*GC
	incomplete int
}

const longestKept = 10

// add counts complete GC g; no stop added later starts before horizon.
func (r *rolling) add(g *GC, horizon int64) {
	if r.byType == nil {
		r.byType = make(map[clrevents.GCType]int)
		for i := range r.stats {
			r.stats[i].MaxPeakMB = -1
			r.stats[i].Histogram = analysis.NewHistogram(PauseBounds, true)
			r.stats[i].SuspendHistogram = analysis.NewHistogram(PauseBounds, true)
		}
	}
	r.byType[g.Type]++
	gen := min(max(g.Generation, 0), 2)
	for _, i := range [2]int{gen, 3} {
		s := &r.stats[i]
		s.Count++
		if g.Induced {
			s.Induced++
		}
		s.SumNanos += g.PauseNanos
		s.RuntimeNanos += max(g.PauseRuntimeNanos, 0)
		s.TotalSuspend += g.SuspendNanos
		s.MaxPeakMB = max(s.MaxPeakMB, g.HeapSizePeakMB())
		u := &r.union[i]
		g.eachStop(func(sp span) { u.add(sp) })
		u.prune(horizon)
		if !g.StartSeen {
			s.StartUnseen++
			continue
		}
		r.seenSum[i] += g.PauseNanos
		s.MaxNanos = max(s.MaxNanos, g.PauseNanos)
		s.MaxSuspend = max(s.MaxSuspend, g.SuspendNanos)
		r.pauses[i].add(g.PauseNanos)
		s.Histogram.Add(g.PauseNanos)
		s.SuspendHistogram.Add(g.SuspendNanos)
	}
	if !g.StartSeen {
		return // a lower bound: kept out of the histograms and the longest
	}
	if len(r.longest) < longestKept || g.PauseNanos > r.longest[len(r.longest)-1].PauseNanos {
		i := sort.Search(len(r.longest), func(i int) bool { return r.longest[i].PauseNanos < g.PauseNanos })
		r.longest = slices.Insert(r.longest, i, g)
		if len(r.longest) > longestKept {
			r.longest = r.longest[:longestKept]
		}
	}
}

// rankOf is the 0-based nearest-rank index of percentile p among n values.
func rankOf(p float64, n int) int {
	i := int(math.Ceil(p/100*float64(n))) - 1
	return min(max(i, 0), n-1)
}

// percentile is the nearest-rank percentile of sorted values.
func percentile(sorted []int64, p float64) int64 {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[rankOf(p, len(sorted))]
}

func (r *rolling) finish(i int, session int64) Rollup {
	s := r.stats[i]
	if s.Count == 0 {
		s.MaxPeakMB = -1
		s.Histogram = analysis.NewHistogram(PauseBounds, true)
		s.SuspendHistogram = analysis.NewHistogram(PauseBounds, true)
		return s
	}
	s.Histogram, s.SuspendHistogram = s.Histogram.Clone(), s.SuspendHistogram.Clone()
	s.TotalNanos = r.union[i].total
	if n := s.Count - s.StartUnseen; n > 0 {
		s.MeanNanos = r.seenSum[i] / int64(n)
	}
	p := r.pauses[i].percentiles(50, 90, 99, 99.9)
	s.P50, s.P90, s.P99, s.P999 = p[0], p[1], p[2], p[3]
	if session > 0 {
		s.PausePercent = float64(s.TotalNanos) * 100 / float64(session)
	}
	return s
}

// Result returns the analysis so far. It may be called at any time (for
// example at the end of a live session); open GCs are listed as
// incomplete.
func (a *Analyzer) Result() *Result {
	res := &Result{
		GCs:               slices.Clone(a.gcs),
		Suspensions:       slices.Clone(a.susps),
		Started:           a.nGC,
		LostEvents:        a.lost,
		UnmatchedRestarts: a.unmatchedRestarts,
		DecodeErrors:      a.decodeErrors,
		ByType:            make(map[clrevents.GCType]int),
	}
	if k := a.opts.MaxGCs; k > 0 && len(res.GCs) > k && a.opts.OnRetire == nil {
		res.GCs = res.GCs[len(res.GCs)-k:]
	}
	if k := a.opts.MaxSuspensions; k > 0 && len(res.Suspensions) > k {
		res.Suspensions = res.Suspensions[len(res.Suspensions)-k:]
	}
	if a.seen {
		res.SessionNanos = a.dur(a.lastTS - a.first)
	}
	r := &a.roll
	res.All = r.finish(3, res.SessionNanos)
	for g := range res.ByGen {
		res.ByGen[g] = r.finish(g, res.SessionNanos)
	}
	for t, n := range r.byType {
		res.ByType[t] = n
	}
	res.Complete = res.All.Count
	res.Incomplete = a.nGC - res.Complete
	res.GivenUp = r.incomplete
	res.Longest = slices.Clone(r.longest)
	res.ByReason = a.ByReason()
	return res
}

// ByReason is Result's ByReason alone, cheap enough for a live view's
// every refresh: every suspension so far, GC or not, by reason, sorted by
// reason code. Suspensions still open count as incomplete, without
// changing the analyzer (it may be called mid-session).
func (a *Analyzer) ByReason() []ReasonRollup {
	reasons := make(map[clrevents.SuspendReason]ReasonRollup, len(a.reasons))
	for k, v := range a.reasons {
		reasons[k] = *v
	}
	for _, s := range a.active {
		rs := reasons[s.reason]
		rs.Reason = s.reason
		rs.add(a.dur(a.lastTS-s.begin), -1, true)
		reasons[s.reason] = rs
	}
	out := make([]ReasonRollup, 0, len(reasons))
	for _, v := range reasons {
		out = append(out, v)
	}
	slices.SortFunc(out, func(x, y ReasonRollup) int { return int(x.Reason) - int(y.Reason) })
	return out
}

// Reason returns the aggregate for one suspension reason (zero if none).
func (r *Result) Reason(reason clrevents.SuspendReason) ReasonRollup {
	for _, s := range r.ByReason {
		if s.Reason == reason {
			return s
		}
	}
	return ReasonRollup{Reason: reason}
}

// eachStop calls f with each stop g's PauseNanos is made of, in nanoseconds
// since the session start.
func (g *GC) eachStop(f func(span)) {
	if g.Type != clrevents.GCBackground {
		f(span{g.PauseStartNanos, g.PauseStartNanos + g.PauseNanos})
		return
	}
	f(span{g.PauseStartNanos, g.PauseStartNanos + g.rt.bgcInit})
	for _, s := range g.rt.stops {
		f(s)
	}
}
