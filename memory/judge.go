package memory

import (
	"fmt"
	"math"
	"strings"
)

// Sample is a split taken at AtNs (nanoseconds since the first sample),
// with the memory cgroup's usage then (0: unknown).
type Sample struct {
	AtNs        int64
	Split       Split
	CgroupUsage uint64
}

// Growth is how one part (or the whole RSS, Kind "") changed over a
// timeline: last less first, and the least-squares slope.
type Growth struct {
	Kind   Kind
	Delta  int64
	PerSec float64
}

// Growths are the RSS's growth (Kind "") and each part's, Kinds order.
func Growths(ss []Sample) []Growth {
	if len(ss) < 2 {
		return nil
	}
	get := func(k Kind, s *Split) float64 {
		if k == "" {
			return float64(s.Rss)
		}
		return float64(s.Bytes(k))
	}
	out := []Growth{}
	for _, k := range append([]Kind{""}, Kinds...) {
		first, last := get(k, &ss[0].Split), get(k, &ss[len(ss)-1].Split)
		out = append(out, Growth{Kind: k, Delta: int64(last - first), PerSec: slope(ss, func(s *Sample) float64 { return get(k, &s.Split) })})
	}
	return out
}

// slope is the least-squares slope of y over the samples, per second (0:
// none, the samples all at one time).
func slope(ss []Sample, y func(*Sample) float64) float64 {
	var n, sx, sy, sxx, sxy float64
	for i := range ss {
		x := float64(ss[i].AtNs) / 1e9
		v := y(&ss[i])
		n++
		sx += x
		sy += v
		sxx += x * x
		sxy += x * v
	}
	d := n*sxx - sx*sx
	if d == 0 {
		return 0
	}
	return (n*sxy - sx*sy) / d
}

// Steady is the change under which a part counts as flat over a timeline:
// 1 MiB, or 1 % of the first RSS when that is more.
func Steady(ss []Sample) float64 {
	if len(ss) == 0 {
		return 1 << 20
	}
	return math.Max(1<<20, float64(ss[0].Split.Rss)/100)
}

// Judge says in one line which part grows over the timeline ss, and how
// close the process is to its cgroup's limit (limit 0: none; usage is the
// cgroup's usage at the end).
func Judge(ss []Sample, limit, usage uint64) string {
	var parts []string
	if len(ss) < 2 {
		parts = append(parts, "one sample, no trend (--duration samples the split over time)")
	} else {
		parts = append(parts, JudgeGrowth(ss))
	}
	if limit > 0 {
		parts = append(parts, JudgeLimit(ss, limit, usage))
	}
	return strings.Join(parts, "; ")
}

// JudgeLimit is Judge's part on the cgroup's limit: the share used and,
// when the usage grows, when the limit is reached at its rate.
func JudgeLimit(ss []Sample, limit, usage uint64) string {
	s := fmt.Sprintf("%.0f %% of the cgroup's memory limit (%s of %s)", LimitPct(limit, usage), MiB(int64(usage)), MiB(int64(limit)))
	if eta, ok := TimeToLimit(ss, limit); ok {
		s += fmt.Sprintf(", reached in %.0f s at this rate", eta)
	}
	return s
}

// LimitPct is usage as a share of limit in percent (0 without a limit).
func LimitPct(limit, usage uint64) float64 {
	if limit == 0 {
		return 0
	}
	return 100 * float64(usage) / float64(limit)
}

// TimeToLimit is the seconds until the cgroup's usage reaches limit at
// its slope over ss, when it grows by more than the steady band over
// them (ok false otherwise, or without usage in every sample).
func TimeToLimit(ss []Sample, limit uint64) (float64, bool) {
	if len(ss) < 2 || limit == 0 {
		return 0, false
	}
	for _, s := range ss {
		if s.CgroupUsage == 0 {
			return 0, false
		}
	}
	last := ss[len(ss)-1].CgroupUsage
	if float64(last)-float64(ss[0].CgroupUsage) < Steady(ss) || last >= limit {
		return 0, false
	}
	// The slope over the samples' usage.
	rate := slope(ss, func(s *Sample) float64 { return float64(s.CgroupUsage) })
	if rate <= 0 {
		return 0, false
	}
	return float64(limit-last) / rate, true
}

// JudgeGrowth is Judge's part on the growth (at least two samples): the
// RSS's change, the part that grew most and its rate, and the GC heap's
// change beside it.
func JudgeGrowth(ss []Sample) string {
	gs := Growths(ss)
	span := float64(ss[len(ss)-1].AtNs-ss[0].AtNs) / 1e9
	steady := Steady(ss)
	rss := gs[0]
	top := topGrowth(gs, steady)
	var gc Growth
	for _, g := range gs {
		if g.Kind == GCHeap {
			gc = g
		}
	}
	head := fmt.Sprintf("RSS %s in %.0f s", signedMiB(rss.Delta), span)
	if top == nil {
		if math.Abs(float64(rss.Delta)) < steady {
			return head + ": flat, no part grows"
		}
		return head + ": no one part grows by more than " + MiB(int64(steady))
	}
	s := fmt.Sprintf("%s: %s grows %s/s (%s)", head, top.Kind.Label(), MiB(int64(top.PerSec)), signedMiB(top.Delta))
	if top.Kind != GCHeap {
		if math.Abs(float64(gc.Delta)) < steady {
			s += " while the GC heap is flat"
		} else {
			s += fmt.Sprintf(" while the GC heap changes %s", signedMiB(gc.Delta))
		}
	}
	return s
}

// MiB formats bytes in MiB with one decimal.
func MiB(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

func signedMiB(b int64) string {
	if b >= 0 {
		return "+" + MiB(b)
	}
	return MiB(b)
}

// Top is the part that grew most over ss, when one grew by more than the
// steady band (ok false otherwise, or with fewer than two samples).
func Top(ss []Sample) (g Growth, ok bool) {
	if len(ss) < 2 {
		return Growth{}, false
	}
	if t := topGrowth(Growths(ss), Steady(ss)); t != nil {
		return *t, true
	}
	return Growth{}, false
}

func topGrowth(gs []Growth, steady float64) *Growth {
	var top *Growth
	for i := 1; i < len(gs); i++ {
		if float64(gs[i].Delta) >= steady && (top == nil || gs[i].Delta > top.Delta) {
			top = &gs[i]
		}
	}
	return top
}
