package main

import (
	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/counters"
	"github.com/clrspy/clrspy/ipc"
	"github.com/clrspy/clrspy/locks"
	"github.com/clrspy/clrspy/stacks"
	"github.com/clrspy/clrspy/threadpool"
)

// The named profiles of `record --profile` that analyses read: their
// runtime keywords are derived from the events the analyses use, as the
// live commands' are, so a recorded trace holds what a live session gets.
func init() {
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
