package stacks

import (
	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/ipc"
)

// SamplerProviders is what a session of the runtime's sample profiler
// needs: the sampler (its provider has no events in the spec table, so it
// is written here) and the method and module events that name its frames
// (derived from SymbolsWant). `clrspy profile`, `record --profile cpu`
// and serve's CPU profiles use it.
func SamplerProviders() []ipc.Provider {
	return append([]ipc.Provider{ipc.SampleProfiler}, SymbolProviders()...)
}

// SymbolProviders is the runtime provider entry that names code (method
// and module events, derived from SymbolsWant): a rundown session's
// (source.Stream.Rundown) and part of every session whose stacks are named.
func SymbolProviders() []ipc.Provider { return clrevents.ProvidersFor(SymbolsWant) }

// SamplesSpec is the profile (Builder) in an analysis.Set: it reads the
// sampler's stack samples (Wants), so its session enables the sampler.
var SamplesSpec = analysis.Spec{Name: "stacks", Keep: Wants, Providers: []ipc.Provider{ipc.SampleProfiler}}
