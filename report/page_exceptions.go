package report

import "github.com/clrspy/clrspy/exceptions"

// PageExceptions is the report page's exceptions table: per type its
// count, its top throw sites (with the first frames of the stack), catch
// sites and message patterns.
type PageExceptions struct {
	Thrown   int64                 `json:"thrown"`
	Caught   int64                 `json:"caught"`
	Uncaught int64                 `json:"uncaught"`
	Open     int64                 `json:"open"`
	Types    []PageExcType         `json:"types"` // most thrown first
	More     int                   `json:"more"`  // types left out
	Timeline ExceptionTimelineJSON `json:"timeline"`
	Notes    []string              `json:"notes"`
}

// PageExcType is one exception type on the page.
type PageExcType struct {
	Type     string        `json:"type"`
	Count    int64         `json:"count"`
	Caught   int64         `json:"caught"`
	Sites    []PageExcSite `json:"sites"`
	Catches  []PageExcSite `json:"catches"`
	Patterns []PageExcSite `json:"patterns"`
}

// PageExcSite is a site (or a message pattern) and its count; Stack holds
// a throw site's first frames.
type PageExcSite struct {
	Site  string   `json:"site"`
	Count int64    `json:"count"`
	Stack []string `json:"stack,omitempty"`
}

// pageExcTop bounds the sites, catches and patterns per type on the page.
const pageExcTop = 5

// PageExceptionsOf is the page's exceptions section (nil when none was
// thrown): a file's page and a live one build it with it.
func PageExceptionsOf(r *exceptions.Result) *PageExceptions {
	if r == nil || r.Thrown == 0 {
		return nil
	}
	return NewPageExceptions(r, maxTableRows)
}

// NewPageExceptions builds the table (at most max types).
func NewPageExceptions(r *exceptions.Result, max int) *PageExceptions {
	pe := &PageExceptions{Thrown: r.Thrown, Caught: r.Caught, Uncaught: r.Uncaught, Open: r.Open,
		Types: []PageExcType{}, Notes: append([]string{}, ExceptionNotes(r)...),
		Timeline: ExceptionTimelineJSON{BinMs: float64(r.Timeline.BinNs) / 1e6, Counts: append([]int64{}, r.Timeline.Counts...)}}
	for i, t := range r.Types {
		if i == max {
			pe.More = len(r.Types) - max
			break
		}
		pt := PageExcType{Type: t.Name, Count: t.Count, Caught: t.Caught, Sites: []PageExcSite{}, Catches: []PageExcSite{}, Patterns: []PageExcSite{}}
		for j, s := range t.ThrowSites {
			if j == pageExcTop {
				break
			}
			st := r.Stacks[s.Stack].Frames
			pt.Sites = append(pt.Sites, PageExcSite{Site: s.Site, Count: s.Count, Stack: append([]string{}, st[:min(len(st), 8)]...)})
		}
		for j, c := range t.CatchSites {
			if j == pageExcTop {
				break
			}
			pt.Catches = append(pt.Catches, PageExcSite{Site: c.Site, Count: c.Count})
		}
		for j, p := range t.Patterns {
			if j == pageExcTop {
				break
			}
			pt.Patterns = append(pt.Patterns, PageExcSite{Site: p.Pattern, Count: p.Count})
		}
		pe.Types = append(pe.Types, pt)
	}
	return pe
}
