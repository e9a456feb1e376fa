package stacks

import (
	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/ipc"
)

// SamplerProviders is what a session of the runtime's sample profiler
// needs: the sampler (its provider has no events in the spec table, so it
// is written here) and the method and module events that name its frames
// (derived from SymbolsWant). `clrspy profile`, `record --profile cpu`
// and serve's CPU profiles use it.
func SamplerProviders() []ipc.Provider {
	return append([]ipc.Provider{ipc.SampleProfiler},
		clrevents.ProvidersFor(SymbolsWant)...)
}
