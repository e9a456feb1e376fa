// Package monitor is the live model of one target that clrspy serve, top
// and the live web view share: a Monitor is fed one event stream (it is an
// analysis.Analyzer itself) and keeps bounded rolling state that
// Snapshot copies out at any time.
//
// What it owns: composing the analyses a live view needs over one stream,
// in an analysis.Set (register: one stacks symbol table shared by the CPU
// window, the exceptions, the thread pool and the locks; gcpause for GCs
// and suspensions, with PerfView's pause and the runtime's own; locks;
// counters for the runtime's own counters; threadpool; exceptions; the
// session's providers derived from the Set) and the rolling state built
// from them:
// the latest GC rows and non-GC suspension rows (gcpause.GCRow and
// SuspensionRow, the rows clrspy gc --json writes), gcpause's summary of
// every GC (gcpause.Summary, gc --json's), pause histograms per generation (exclusive: a GC counts once,
// under the generation it collected), the share of time stopped over the
// last 1, 10 and 60 s and since the session began, the longest pause,
// heap sizes after the last GC, promoted bytes, the allocation rate,
// suspensions by reason, lock contention (totals, wait histogram, top
// locks), top methods and a flame graph of the last CPUWindow, process
// facts (pid, name, runtime version, GC flavour, uptime) and the session's
// state (running, stopped, target exited with status, error).
//
// The monitor keeps no pairing, decoding or judgement of its own: the
// suspensions are gcpause's (OnStopped), the runtime's and the process's
// information runinfo's, the GC flavour gcpause's (Flavor: the startup
// flags when the stream had them, which a live session gets from the
// runtime provider's RuntimeInformation at its start, else what the GCs
// show), the counts triage judges triage's (GCTally, every GC). Snapshot
// holds the analyses' results; TriageFacts judges it with triage.FactsFrom,
// the composition `clrspy triage` judges a stream with; CheckValid checks
// the snapshot by each result's own CheckValid and the model's figures
// against them.
//
// Threading: Event (and Run, which calls it) runs on the one goroutine
// that reads the stream; Snapshot, the setters and Stats may be called
// from any goroutine. One mutex guards the state: Event holds it for one
// event, Snapshot while it copies. Options.OnGC and OnSuspension run on
// the reader goroutine after the lock is released, so they may call
// Snapshot; a slow callback delays the reader (and so the runtime's
// buffer), never Snapshot callers.
//
// Time: every window runs on the event clock (the latest event's
// timestamp), not the wall clock, so a trace file replays the same as the
// live session did. A live session with counters enabled gets an event at
// least every counter interval, which keeps the clock moving while the
// target is idle. Stopped time is the union of the suspensions'
// intervals (SuspendEEBegin to RestartEEEnd, any thread, as gcpause pairs
// them: Options.OnStopped, OpenSince): overlapping
// suspensions count once. A suspension still in progress counts up to the
// latest event; one whose end was lost counts nothing (its reason's
// Incomplete says so).
//
// Locks are locks.Analyzer in its bounded mode (4096 locks, 1024 waiting
// stacks, no per-stack samples, no object types), its waiting stacks named
// by the Set's symbol table when there is one; ContentionStart events are
// counted beside it, as the runtime counts them.
//
// Bounds: GC rows (Options.MaxGCs), suspension rows (MaxSuspensions),
// the stopped-time unions (intervals of the last 60 s, at most 65536 each:
// a minute of the sample profiler's suspensions), open suspensions (64),
// locks tracked (4096, the rest under one entry), waiting threads (65536),
// CPU stacks (those seen in the window; slots are reused), counter series
// (counters.Options.MaxSeries). The symbol table grows with the methods
// the target compiles, not with time. No I/O: Run reads through package
// source, which also asks a live target for its ProcessInfo.
package monitor
