package web

import (
	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/exceptions"
	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/heap"
	"github.com/clrspy/clrspy/ipc"
	"github.com/clrspy/clrspy/locks"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/stacks"
	"github.com/clrspy/clrspy/threadpool"
)

// PageProviders are the events a live session needs for every section of
// the report page (report.PageAnalyses): GC events at verbose level (the allocation ticks, and the
// level at which the runtime names methods as it compiles them, so a live
// flame graph is named before the rundown), the sample profiler, method
// and module events, contention with the thread events that map lock
// owners, sampled allocations with type names; movement adds the GC
// survival and movement events that tell which sampled objects survive
// (they make every GC slower).
//
// The runtime provider is derived from the events the page's analyses read
// (clrevents.ProvidersFor); the sample profiler is written here.
func PageProviders(movement bool) []ipc.Provider {
	wants := []func(*nettrace.Metadata) bool{gcpause.Wants, stacks.SymbolsWant, locks.WantsContention,
		exceptions.Wants, threadpool.Wants, heap.WantsSession}
	if movement {
		wants = append(wants, heap.WantsMovement)
	}
	return append(clrevents.ProvidersFor(wants...),
		ipc.SampleProfiler)
}
