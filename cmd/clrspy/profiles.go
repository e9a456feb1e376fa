package main

import (
	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/counters"
	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/heap"
	"github.com/clrspy/clrspy/heapgraph"
	"github.com/clrspy/clrspy/ipc"
	"github.com/clrspy/clrspy/locks"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/stacks"
	"github.com/clrspy/clrspy/threadpool"
)

// The named profiles of `record --profile`: their runtime keywords are
// derived from the events the analyses use, as the live commands' are, so
// a recorded trace holds what a live session gets. Package ipc keeps the
// registry; it knows no analysis.
func init() {
	ipc.RegisterProfile("gc", "GC events at informational level: starts, ends, suspensions, heap stats (cheap)", gcProfile)
	ipc.RegisterProfile("gc-verbose", "GC events at verbose level: adds allocation ticks every ~100 KB", gcVerboseProfile)
	ipc.RegisterProfile("cpu", "managed stack samples every millisecond, with method names", stacks.SamplerProviders)
	ipc.RegisterProfile("alloc", "allocation ticks and sampled allocations with type names and stacks", allocProfile)
	ipc.RegisterProfile("movement", "GC events plus every surviving and moved object range", movementProfile)
	ipc.RegisterProfile("gcdump", "a heap snapshot: one induced blocking gen2 GC describing every object, reference and root (clrspy snapshot reads it)", heapgraph.SessionProviders)
	// all leaves movement out: its keyword makes the runtime report every
	// surviving range and lengthens each GC's pause (measured: background
	// gen2 pauses 30x longer), so "all" would distort what it records.
	ipc.RegisterProfile("all", "every other set but movement (which lengthens GC pauses: name it to add it) and gcdump (a heap snapshot)", allProfile)
	ipc.RegisterProfile("contention", "lock contention and wait-handle waits, with stacks (verbose: WaitHandle events need it)", contentionProfile)
	ipc.RegisterProfile("threadpool", "thread-pool events, wait-handle waits and lock contention with stacks (verbose: WaitHandle events need it), the runtime's counters every second", threadPoolProfile)
}

// contentionProfile: what `clrspy locks` reads without --object-types
// (lock events, the thread events that name owners), the blocking waits
// `clrspy threadpool` reads, and method and module events to name stacks.
func contentionProfile() []ipc.Provider {
	return clrevents.ProvidersFor(locks.WantsContention, threadpool.WantsWaits, stacks.SymbolsWant)
}

// threadPoolProfile: what `clrspy threadpool` reads, with the runtime's
// EventCounters every second (the queue length).
func threadPoolProfile() []ipc.Provider {
	return append(clrevents.ProvidersFor(threadpool.Wants, stacks.SymbolsWant),
		ipc.Provider{Name: counters.RuntimeSource, Level: ipc.LevelInformational, Args: "EventCounterIntervalSec=1"})
}

// gcProfile: what `clrspy gc` reads.
func gcProfile() []ipc.Provider { return clrevents.ProvidersFor(gcpause.Wants) }

// gcVerboseProfile: gcpause's events and the allocation ticks (a verbose
// event, about one per 100 KB allocated).
func gcVerboseProfile() []ipc.Provider {
	return clrevents.ProvidersFor(gcpause.Wants, allocationTicks)
}

func allocationTicks(m *nettrace.Metadata) bool {
	return m.Runtime == nettrace.Runtime && m.EventID == clrevents.IDGCAllocationTick
}

// allocProfile: what `clrspy heap` reads without movement, and the method
// events that name the allocation stacks.
func allocProfile() []ipc.Provider {
	return clrevents.ProvidersFor(heap.WantsSession, stacks.SymbolsWant)
}

// movementProfile: gcpause's events and the survival and movement ranges
// heap reads.
func movementProfile() []ipc.Provider {
	return clrevents.ProvidersFor(gcpause.Wants, heap.WantsMovement)
}

// allProfile: the runtime events of the other sets but movement and
// gcdump (GCs, allocations, lock contention with the thread events that
// name owners, the thread pool's events and wait handles, method events)
// and the sample profiler. The threadpool profile's counters are not in
// it.
func allProfile() []ipc.Provider {
	return ipc.Merge(clrevents.ProvidersFor(gcpause.Wants, allocationTicks, heap.WantsSession, locks.WantsContention,
		threadpool.Wants, stacks.SymbolsWant), stacks.SamplerProviders())
}
