package report

import (
	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/nettrace"
)

// The tests build pages from committed traces through pageset, which
// composes the page's analyses and imports report: only report's external
// test package can import it, so pageset_link_test.go sets NewPageAnalyses
// (report itself runs no analysis).

// PageAnalyses are pageset.Analyses as the tests feed and read them.
type PageAnalyses interface {
	Analyzers() []analysis.Analyzer
	Parts() PageParts
}

// PageAnalysesOptions are the pageset.Options the tests set.
type PageAnalysesOptions struct{ NoHeap bool }

// NewPageAnalyses is pageset.New (set by pageset_link_test.go).
var NewPageAnalyses func(*nettrace.Header, PageAnalysesOptions) PageAnalyses
