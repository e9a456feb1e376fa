package monitor

import (
	"github.com/clrspy/clrspy/exceptions"
)

// ExceptionsSummary is the exceptions a session saw (Options.Exceptions):
// totals and the top types with their top throw sites, bounded so a
// metric exposition of it keeps a fixed cardinality.
type ExceptionsSummary struct {
	Thrown   int64                  `json:"thrown"`
	Caught   int64                  `json:"caught"`
	Uncaught int64                  `json:"uncaught"`
	Open     int64                  `json:"open"`
	Types    []ExceptionTypeSummary `json:"types"`
}

// ExceptionTypeSummary is one type (or "[other types]") and its top throw
// sites (the rest under "[other sites]"): the sites add up to Count.
type ExceptionTypeSummary struct {
	Type       string               `json:"type"`
	Count      int64                `json:"count"`
	ThrowSites []ExceptionSiteCount `json:"throw_sites"`
}

// ExceptionSiteCount is a throw site's count.
type ExceptionSiteCount struct {
	Site  string `json:"site"`
	Count int64  `json:"count"`
}

// exceptionsSummary is e's summary bounded to types and sites per type.
func exceptionsSummary(e *exceptions.Analyzer, types, sites int) *ExceptionsSummary {
	s := e.Summary(types, sites)
	out := &ExceptionsSummary{Thrown: s.Thrown, Caught: s.Caught, Uncaught: s.Uncaught, Open: s.Open,
		Types: make([]ExceptionTypeSummary, 0, len(s.Types))}
	for _, t := range s.Types {
		ts := ExceptionTypeSummary{Type: t.Type, Count: t.Count, ThrowSites: make([]ExceptionSiteCount, 0, len(t.Sites))}
		for _, c := range t.Sites {
			ts.ThrowSites = append(ts.ThrowSites, ExceptionSiteCount{Site: c.Site, Count: c.Count})
		}
		out.Types = append(out.Types, ts)
	}
	return out
}
