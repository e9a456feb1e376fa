package heap

import (
	"slices"
	"strings"

	"github.com/clrspy/clrspy/stacks"
)

// Group aggregates the sampled objects of one type or one allocation site.
// The counts are of followed samples; W holds the same counts weighted by
// the reservoir (equal to them when nothing was evicted), and the
// estimates and percentages use the weighted ones.
type Group struct {
	Key      string
	Sampled  int     // sampled objects
	EstBytes float64 // estimated bytes allocated
	EstCount float64 // estimated objects allocated
	// Decided counts sampled objects whose fate a GC has decided (dead,
	// or alive after at least one GC that condemned their generation); the
	// percentages below are over them, so objects allocated after the last
	// GC do not count as short-lived.
	Decided     int
	SurvivedOne int // survived at least one GC
	ReachedGen2 int // reached gen2 (LOH/POH objects are there from birth)
	DiedInGen2  int // died in gen2, LOH or POH: the expensive mid-life objects
	AliveAtEnd  int
	LiveBytes   float64 // estimated bytes still alive at the end
	LiveCount   float64 // estimated objects still alive at the end
	W           Weighted
}

// Weighted are a Group's counts, each sample weighted by the reservoir:
// estimates of the counts over every sample, followed or not.
type Weighted struct {
	Sampled, Decided, SurvivedOne, ReachedGen2, DiedInGen2, AliveAtEnd float64
}

func pct(n, d float64) float64 {
	if d == 0 {
		return 0
	}
	return 100 * n / d
}

// SurvivedOnePct is the share of decided samples that survived a GC.
func (g *Group) SurvivedOnePct() float64 { return pct(g.W.SurvivedOne, g.W.Decided) }

// ReachedGen2Pct is the share of decided samples that reached gen2.
func (g *Group) ReachedGen2Pct() float64 { return pct(g.W.ReachedGen2, g.W.Decided) }

// DiedInGen2Pct is the share of decided samples that died in gen2.
func (g *Group) DiedInGen2Pct() float64 { return pct(g.W.DiedInGen2, g.W.Decided) }

// Add adds another group's counts to g.
func (g *Group) Add(o *Group) {
	g.Sampled += o.Sampled
	g.EstBytes += o.EstBytes
	g.EstCount += o.EstCount
	g.Decided += o.Decided
	g.SurvivedOne += o.SurvivedOne
	g.ReachedGen2 += o.ReachedGen2
	g.DiedInGen2 += o.DiedInGen2
	g.AliveAtEnd += o.AliveAtEnd
	g.LiveBytes += o.LiveBytes
	g.LiveCount += o.LiveCount
	g.W.Sampled += o.W.Sampled
	g.W.Decided += o.W.Decided
	g.W.SurvivedOne += o.W.SurvivedOne
	g.W.ReachedGen2 += o.W.ReachedGen2
	g.W.DiedInGen2 += o.W.DiedInGen2
	g.W.AliveAtEnd += o.W.AliveAtEnd
}

// AgeBucket counts objects that died after between Min and Max GCs
// (inclusive; Max 0 means no upper bound), weighted by the reservoir and
// rounded.
type AgeBucket struct {
	Min, Max int
	Objects  int
}

// Summary is the report-ready digest of a Result.
type Summary struct {
	Types []Group // by estimated bytes, descending
	Sites []Group
	Ages  []AgeBucket // age at death in GCs: 1, 2, 3–4, 5–8, ...
	Total Group
}

// Site names of stacks that are not in Result.Stacks.
const (
	SiteNoStack      = "[no stack]"
	SiteStackNotKept = "[stack not kept: table full]"
)

// Summarize groups r's tallies by type and by allocation site; site names
// a stack (nil: the leaf address).
func Summarize(r *Result, sym *stacks.Symbols) *Summary {
	s := &Summary{}
	types := map[string]*Group{}
	sites := map[string]*Group{}
	siteNames := make([]string, len(r.Stacks))
	for i, st := range r.Stacks {
		siteNames[i] = siteName(sym, st)
	}
	for i := range r.Tallies {
		tl := &r.Tallies[i]
		s.Total.Add(&tl.Group)
		g := types[tl.Key]
		if g == nil {
			g = &Group{Key: tl.Key}
			types[tl.Key] = g
		}
		g.Add(&tl.Group)
		site := SiteNoStack
		switch {
		case tl.Stack >= 0:
			site = siteNames[tl.Stack]
		case tl.Stack == StackNotKept:
			site = SiteStackNotKept
		}
		g = sites[site]
		if g == nil {
			g = &Group{Key: site}
			sites[site] = g
		}
		g.Add(&tl.Group)
	}
	s.Total.Key = ""
	s.Types = sorted(types)
	s.Sites = sorted(sites)
	ages := slices.Clone(r.Ages)
	// Trim empty buckets at the end (all of them when nothing died).
	for len(ages) > 0 && ages[len(ages)-1].Objects == 0 {
		ages = ages[:len(ages)-1]
	}
	s.Ages = ages
	return s
}

// siteName is the allocating method and its caller: the leaf alone is
// often a shared helper (a constructor, List.Add).
func siteName(sym *stacks.Symbols, st []uint64) string {
	f := sym.Frames(st[:min(2, len(st))])
	return strings.Join(f, " ← ")
}

func sorted(m map[string]*Group) []Group {
	out := make([]Group, 0, len(m))
	for _, g := range m {
		out = append(out, *g)
	}
	slices.SortFunc(out, func(a, b Group) int {
		switch {
		case a.EstBytes > b.EstBytes:
			return -1
		case a.EstBytes < b.EstBytes:
			return 1
		}
		return strings.Compare(a.Key, b.Key)
	})
	return out
}
