package heap

import (
	"github.com/clrspy/clrspy/stacks"
	"slices"
	"strings"
)

// Group aggregates the sampled objects of one type or one allocation site.
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
}

func pct(n, d int) float64 {
	if d == 0 {
		return 0
	}
	return 100 * float64(n) / float64(d)
}

// SurvivedOnePct is the share of decided samples that survived a GC.
func (g *Group) SurvivedOnePct() float64 { return pct(g.SurvivedOne, g.Decided) }

// ReachedGen2Pct is the share of decided samples that reached gen2.
func (g *Group) ReachedGen2Pct() float64 { return pct(g.ReachedGen2, g.Decided) }

// DiedInGen2Pct is the share of decided samples that died in gen2.
func (g *Group) DiedInGen2Pct() float64 { return pct(g.DiedInGen2, g.Decided) }

func (g *Group) add(o *Object) {
	g.Sampled++
	g.EstBytes += o.EstBytes
	g.EstCount += o.EstCount
	if o.Alive {
		g.AliveAtEnd++
		g.LiveBytes += o.EstBytes
	}
	if !o.Decided() {
		return
	}
	g.Decided++
	if o.Survived > 0 {
		g.SurvivedOne++
	}
	if o.MaxGen >= Gen2 {
		g.ReachedGen2++
	}
	if !o.Alive && o.DeathGen >= Gen2 {
		g.DiedInGen2++
	}
}

// AgeBucket counts objects that died after between Min and Max GCs
// (inclusive; Max 0 means no upper bound).
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

// Summarize groups r's objects by type and by allocation site; site names
// a stack (nil: the leaf address).
func Summarize(r *Result, sym *stacks.Symbols) *Summary {
	s := &Summary{}
	types := map[string]*Group{}
	sites := map[string]*Group{}
	siteNames := make([]string, len(r.Stacks))
	for i, st := range r.Stacks {
		siteNames[i] = siteName(sym, st)
	}
	ages := []AgeBucket{{Min: 1, Max: 1}, {Min: 2, Max: 2}}
	for lo := 3; lo < 1<<12; lo = lo*2 - 1 {
		ages = append(ages, AgeBucket{Min: lo, Max: lo*2 - 2})
	}
	ages[len(ages)-1].Max = 0
	for i := range r.Objects {
		o := &r.Objects[i]
		s.Total.add(o)
		g := types[o.Type]
		if g == nil {
			g = &Group{Key: o.Type}
			types[o.Type] = g
		}
		g.add(o)
		site := "[no stack]"
		if o.Stack >= 0 {
			site = siteNames[o.Stack]
		}
		g = sites[site]
		if g == nil {
			g = &Group{Key: site}
			sites[site] = g
		}
		g.add(o)
		if !o.Alive && !o.Replaced {
			for j := range ages {
				if o.GCsSeen >= ages[j].Min && (ages[j].Max == 0 || o.GCsSeen <= ages[j].Max) {
					ages[j].Objects++
					break
				}
			}
		}
	}
	s.Types = sorted(types)
	s.Sites = sorted(sites)
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
