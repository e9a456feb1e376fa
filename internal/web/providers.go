package web

import (
	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/ipc"
	"github.com/clrspy/clrspy/pageset"
)

// PageProviders are the events a live session needs for every section of
// the report page, derived from the page's analyses (pageset.Register,
// analysis.Set.Providers): GC events, the sample profiler, method and
// module events, contention with the thread events that map lock owners,
// the thread pool's and the exceptions' events, sampled allocations with
// type names; movement adds the GC survival and movement events that tell
// which sampled objects survive (they make every GC slower).
func PageProviders(movement bool) []ipc.Provider {
	s := analysis.NewSet()
	pageset.Register(s, pageset.Options{Movement: movement})
	return s.Providers()
}
