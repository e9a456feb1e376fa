package stacks

import (
	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/ipc"
	"github.com/clrspy/clrspy/nettrace"
)

// SamplerProviders is what a session of the runtime's sample profiler
// needs: the sampler (its provider has no events in the spec table, so it
// is written here) and the method and module events that name its frames
// (derived from SymbolsWant), at Verbose: the runtime writes a method's
// load with its name (MethodLoadVerbose) only to a verbose session
// (measured on .NET 10: an informational one with the JIT keyword gets no
// method load at all, and its frames stay unnamed until the rundown at
// the session's end). So the samples are named while the session runs,
// launched or attached alike (an attached target's earlier code comes
// from a rundown, source.Stream.Rundown). `clrspy profile`, `record
// --profile cpu`, serve's CPU profiles and the live CPU window (top --cpu)
// use it.
func SamplerProviders() []ipc.Provider {
	ps := append([]ipc.Provider{ipc.SampleProfiler}, SymbolProviders()...)
	for i := range ps {
		if ps[i].Name == nettrace.ProviderRuntime {
			ps[i].Level = max(ps[i].Level, clrevents.LevelVerbose)
		}
	}
	return ps
}

// SymbolProviders is the runtime provider entry that names code (method
// and module events, derived from SymbolsWant): a rundown session's
// (source.Stream.Rundown) and part of every session whose stacks are named.
func SymbolProviders() []ipc.Provider { return clrevents.ProvidersFor(SymbolsWant) }

// SamplesSpec is the profile (Builder) in an analysis.Set: it reads the
// sampler's stack samples (Wants), so its session enables the sampler.
var SamplesSpec = analysis.Spec{Name: "stacks", Keep: Wants, Providers: []ipc.Provider{ipc.SampleProfiler}}
