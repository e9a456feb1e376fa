package exceptions

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/clrspy/clrspy/stacks"
)

// Result is the analysis of a stream so far.
type Result struct {
	// Thrown counts every ExceptionThrown event: first-chance exceptions,
	// rethrows included (Rethrown of them).
	Thrown, Rethrown, Nested int64
	// Caught counts exceptions a catch was seen for (ExceptionCatchStart;
	// a type's catch sites count every catch entered, so a rethrown
	// exception counts once here and at each catch);
	// Uncaught those whose dispatch ended (ExceptionThrownStop, or a later
	// throw on the thread when the runtime sends no stop) without one:
	// handled outside managed code or unhandled. Open are still being
	// dispatched when the stream ended, which is also what an unhandled
	// exception that ends the process leaves.
	Caught, Uncaught, Open int64
	// Finallys and Filters count the finally and filter funclets run.
	Finallys, Filters int64
	// CatchesWithoutThrow and StopsWithoutThrow are catches and ends of
	// exceptions thrown before the session began.
	CatchesWithoutThrow, StopsWithoutThrow int64
	// HandlingEvents is true when the stream has catch or stop events
	// (the runtime sends them, and the session asked for them).
	HandlingEvents bool

	Types []Type // by count, most first
	// Stacks are the throw stacks by index (ThrowSite.Stack); 0 is the
	// empty stack, 1 OtherStacks.
	Stacks []Stack
	// Timeline counts exceptions per BinNs since the session's start.
	Timeline Timeline

	// Folded counts what went past a bound into an "[other ...]" entry.
	FoldedTypes, FoldedStacks, FoldedPatterns, FoldedCatchSites int64
	// LostDispatches counts open exceptions forgotten (deeper than the
	// per-thread bound, or thread table reset).
	LostDispatches int64

	DecodeErrors uint64
	FirstError   string
}

// Type is one exception type.
type Type struct {
	Name             string
	Count            int64
	Caught, Uncaught int64
	Patterns         []Pattern   // by count
	ThrowSites       []ThrowSite // by count
	CatchSites       []CatchSite // by count
}

// Pattern is a folded message and how often it was thrown.
type Pattern struct {
	Pattern string
	Example string // the first message of the pattern
	Count   int64
}

// ThrowSite is the throwing done from one stack.
type ThrowSite struct {
	// Site is the first application frame of the stack (the first
	// managed frame outside the framework's assemblies), else its first
	// managed frame, else NoStack.
	Site  string
	Stack int // index into Result.Stacks
	Count int64
}

// CatchSite is a method that caught the type.
type CatchSite struct {
	Site  string
	Count int64
}

// Stack is a throw stack, leaf first.
type Stack struct {
	IPs     []uint64
	Frames  []string
	Modules []string
}

// Timeline is the rate over time.
type Timeline struct {
	BinNs  int64
	Counts []int64
}

// Peak is the largest bin and its index.
func (t *Timeline) Peak() (count int64, bin int) {
	for i, c := range t.Counts {
		if c > count {
			count, bin = c, i
		}
	}
	return count, bin
}

// Result names the stacks and returns the analysis so far. It does not
// change the analyzer, so it may be called again (a live view).
func (a *Analyzer) Result() *Result {
	r := &Result{
		Thrown: a.thrown, Rethrown: a.rethrown, Nested: a.nested,
		Caught: a.caught, Uncaught: a.uncaught,
		Finallys: a.finallys, Filters: a.filters,
		CatchesWithoutThrow: a.catchNoThrow, StopsWithoutThrow: a.stopNoThrow,
		HandlingEvents: a.sawCatch || a.sawStop,
		FoldedTypes:    a.foldedTypes, FoldedStacks: a.foldedStacks,
		FoldedPatterns: a.foldedPatterns, FoldedCatchSites: a.foldedCatches,
		LostDispatches: a.depthDrops,
		DecodeErrors:   a.decodeErrors,
		Timeline:       Timeline{BinNs: a.binNs, Counts: slices.Clone(a.bins)},
	}
	if a.firstErr != nil {
		r.FirstError = a.firstErr.Error()
	}
	for _, t := range a.threads {
		for _, o := range t.open {
			if !o.caught {
				r.Open++
			}
		}
	}
	r.Stacks = make([]Stack, len(a.stk.Stacks))
	r.Stacks[1].Frames = []string{OtherStacks}
	sites := make([]string, len(a.stk.Stacks))
	sites[0], sites[1] = NoStack, OtherStacks
	var buf []stacks.Frame
	for i := 2; i < len(a.stk.Stacks); i++ {
		ips := a.stk.Stacks[i]
		st := &r.Stacks[i]
		st.IPs = ips
		if a.sym == nil {
			st.Frames = make([]string, len(ips))
			for j, ip := range ips {
				st.Frames[j] = fmt.Sprintf("0x%x", ip)
			}
			sites[i] = st.Frames[0]
			continue
		}
		buf, _ = a.sym.AppendStack(buf[:0], ips, a.hdr.Nanos(a.stk.TS[i]))
		st.Frames = make([]string, len(buf))
		st.Modules = make([]string, len(buf))
		for j, f := range buf {
			st.Frames[j], st.Modules[j] = f.Name, f.Module
		}
		sites[i] = Site(buf)
	}

	byType := make([]Type, len(a.types))
	for i, t := range a.types {
		byType[i] = Type{Name: t.name, Count: t.count, Caught: t.caught, Uncaught: t.uncaught}
	}
	for k, n := range a.throws {
		t := &byType[k.a]
		t.ThrowSites = append(t.ThrowSites, ThrowSite{Site: sites[k.b], Stack: int(k.b), Count: n})
	}
	for k, n := range a.catches {
		t := &byType[k.a]
		t.CatchSites = append(t.CatchSites, CatchSite{Site: a.catchN[k.b], Count: n})
	}
	for _, p := range a.pats {
		t := &byType[p.typ]
		t.Patterns = append(t.Patterns, Pattern{Pattern: p.pattern, Example: p.example, Count: p.count})
	}
	for i := range byType {
		t := &byType[i]
		if t.Count == 0 {
			continue
		}
		t.ThrowSites = mergeSites(t.ThrowSites, r.Stacks)
		slices.SortFunc(t.CatchSites, func(x, y CatchSite) int {
			return cmp.Or(cmp.Compare(y.Count, x.Count), strings.Compare(x.Site, y.Site))
		})
		slices.SortFunc(t.Patterns, func(x, y Pattern) int {
			return cmp.Or(cmp.Compare(y.Count, x.Count), strings.Compare(x.Pattern, y.Pattern))
		})
		r.Types = append(r.Types, *t)
	}
	slices.SortFunc(r.Types, func(x, y Type) int {
		return cmp.Or(cmp.Compare(y.Count, x.Count), strings.Compare(x.Name, y.Name))
	})
	return r
}

// mergeSites merges the rows of stacks that read the same once named
// (addresses differ within the same methods: a loop's iterations, a
// method rejitted at another tier) and sorts them by count.
func mergeSites(ts []ThrowSite, st []Stack) []ThrowSite {
	slices.SortFunc(ts, func(x, y ThrowSite) int { return cmp.Compare(x.Stack, y.Stack) })
	byText := map[string]int{}
	out := ts[:0]
	for _, s := range ts {
		key := strings.Join(st[s.Stack].Frames, "\n")
		if i, ok := byText[key]; ok {
			out[i].Count += s.Count
			continue
		}
		byText[key] = len(out)
		out = append(out, s)
	}
	slices.SortFunc(out, func(x, y ThrowSite) int {
		return cmp.Or(cmp.Compare(y.Count, x.Count), strings.Compare(x.Site, y.Site), cmp.Compare(x.Stack, y.Stack))
	})
	return out
}

// Site is the throw site of a named stack (leaf first): its first
// application frame, else its first managed frame, else its first frame.
func Site(fs []stacks.Frame) string {
	if len(fs) == 0 {
		return NoStack
	}
	for i, f := range fs {
		if f.Kind == stacks.KindManaged && !Framework(f.Module, f.Name) {
			if stacks.RuntimeGenerated(f.Name) {
				// A compiled expression or DynamicMethod names nothing in
				// the application: say what calls it.
				for _, c := range fs[i+1:] {
					if c.Kind == stacks.KindManaged && !stacks.RuntimeGenerated(c.Name) {
						return f.Name + " [runtime-generated, called by " + c.Name + "]"
					}
				}
				return f.Name + " [runtime-generated]"
			}
			return f.Name
		}
	}
	for _, f := range fs {
		if f.Kind == stacks.KindManaged {
			return f.Name
		}
	}
	return fs[0].Name
}

// Framework reports whether a frame is the framework's rather than the
// application's: by its module (System.*.dll, Microsoft.*.dll, mscorlib,
// netstandard) or, when the module is unknown, its namespace.
func Framework(module, name string) bool {
	if module != "" {
		m := strings.ToLower(module)
		return strings.HasPrefix(m, "system.") || strings.HasPrefix(m, "microsoft.") ||
			m == "mscorlib.dll" || m == "netstandard.dll" || m == "system.dll"
	}
	return strings.HasPrefix(name, "System.") || strings.HasPrefix(name, "Microsoft.")
}

// Rate is exceptions per second over the bins from first to the last
// non-empty one (0 without exceptions).
func (t *Timeline) Rate() float64 {
	var n int64
	last := -1
	for i, c := range t.Counts {
		n += c
		if c > 0 {
			last = i
		}
	}
	if last < 0 || t.BinNs <= 0 {
		return 0
	}
	return float64(n) / (float64(last+1) * float64(t.BinNs) / 1e9)
}

// Summary is the bounded view a live surface shows (serve's metrics,
// top): totals and, for the top types, the top throw sites.
type Summary struct {
	Thrown, Caught, Uncaught, Open int64
	Types                          []TypeSummary
}

// TypeSummary is one type's count and its top throw sites.
type TypeSummary struct {
	Type  string
	Count int64
	Sites []SiteCount
}

// SiteCount is a throw site's count.
type SiteCount struct {
	Site  string
	Count int64
}

// OtherSites names the rest of a type's throws past the top sites, so a
// type's sites add up to its count.
const OtherSites = "[other sites]"

// Summary returns the totals, the topTypes types thrown most and, for
// each, its topSites throw sites by count (the rest under OtherSites): a
// fixed cardinality whatever the program throws. Each stack's site is
// named once and kept (Result names every stack again), so a summary a
// second costs only the sorting.
func (a *Analyzer) Summary(topTypes, topSites int) Summary {
	s := Summary{Thrown: a.thrown, Caught: a.caught, Uncaught: a.uncaught}
	for _, t := range a.threads {
		for _, o := range t.open {
			if !o.caught {
				s.Open++
			}
		}
	}
	for len(a.sites) < len(a.stk.Stacks) {
		a.sites = append(a.sites, "")
	}
	var buf []stacks.Frame
	bySite := make([]map[string]int64, len(a.types))
	for k, n := range a.throws {
		site := a.sites[k.b]
		if site == "" {
			switch {
			case k.b == 0:
				site = NoStack
			case k.b == 1:
				site = OtherStacks
			case a.sym == nil:
				site = fmt.Sprintf("0x%x", a.stk.Stacks[k.b][0])
			default:
				buf, _ = a.sym.AppendStack(buf[:0], a.stk.Stacks[k.b], a.hdr.Nanos(a.stk.TS[k.b]))
				site = Site(buf)
			}
			// Kept once named by a method: a stack seen before its
			// methods' events is named again next time.
			if k.b <= 1 || slices.ContainsFunc(buf, func(f stacks.Frame) bool { return f.Kind == stacks.KindManaged }) {
				a.sites[k.b] = site
			}
		}
		m := bySite[k.a]
		if m == nil {
			m = map[string]int64{}
			bySite[k.a] = m
		}
		m[site] += n
	}
	order := make([]int, 0, len(a.types))
	for i, t := range a.types {
		if t.count > 0 {
			order = append(order, i)
		}
	}
	slices.SortFunc(order, func(x, y int) int {
		return cmp.Or(cmp.Compare(a.types[y].count, a.types[x].count), strings.Compare(a.types[x].name, a.types[y].name))
	})
	for n, i := range order {
		if n == topTypes {
			// The rest of the types, as one.
			o := TypeSummary{Type: OtherTypes}
			for _, j := range order[n:] {
				o.Count += a.types[j].count
			}
			s.Types = append(s.Types, o)
			break
		}
		ts := TypeSummary{Type: a.types[i].name, Count: a.types[i].count}
		for site, c := range bySite[i] {
			ts.Sites = append(ts.Sites, SiteCount{site, c})
		}
		slices.SortFunc(ts.Sites, func(x, y SiteCount) int {
			return cmp.Or(cmp.Compare(y.Count, x.Count), strings.Compare(x.Site, y.Site))
		})
		if len(ts.Sites) > topSites {
			var rest int64
			for _, sc := range ts.Sites[topSites:] {
				rest += sc.Count
			}
			ts.Sites = append(ts.Sites[:topSites], SiteCount{OtherSites, rest})
		}
		s.Types = append(s.Types, ts)
	}
	return s
}
