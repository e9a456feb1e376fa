package report_test

import (
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/pageset"
	"github.com/clrspy/clrspy/report"
)

func init() {
	report.NewPageAnalyses = func(hdr *nettrace.Header, o report.PageAnalysesOptions) report.PageAnalyses {
		return pageset.New(hdr, pageset.Options{NoHeap: o.NoHeap})
	}
}
