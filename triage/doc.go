// Package triage owns clrspy's judgement of a short look at one process:
// it composes the existing analyses over one stream (gcpause, locks,
// counters, runinfo and, when the stream has samples, stacks) into one set
// of facts per area (gc, memory, locks, threadpool, exceptions, cpu), and
// turns the facts into ranked findings: a severity (critical, warning,
// info) from one table of thresholds (Thresholds, stated and explained in
// docs/TRIAGE.md, a test keeps the two equal), a title with the number,
// the evidence (the figures) and the next clrspy command to run.
//
// The seam: findings are computed from Facts alone, never from an
// analysis's Result directly. Facts are filled from the analyses by
// Analyzer, and by a caller holding the same analyses' results (a live
// model's snapshot) through the functions the Analyzer uses itself:
// PauseFacts, MemoryFrom, LocksFrom, CountersFrom, ThreadPoolFrom,
// ExceptionsFrom, RequestsFrom and CPUFrom with /proc's Readings, so
// every surface judges alike. The thread-pool and exception facts come from the runtime's
// own counters today (queue length, thread count, completed items,
// exception count; Source "counters"); an analysis of the runtime's
// thread-pool or exception events plugs in as a Contributor
// (Options.Contributors: fed the same stream, it fills the same structs
// with Source set to its name) or through SetThreadPool / SetExceptions,
// and the same rules then read the better figures.
//
// One composition of the facts: FactsFrom over Inputs (the analyses'
// results over a window, and GCTally's count of every GC) is how the
// Analyzer judges a stream and how a live model (internal/monitor's
// TriageFacts) judges its snapshot.
//
// No I/O: the caller supplies what only the operating system knows (the
// number of cores, the process's CPU demand from /proc) through
// Analyzer.SetCPU, and a live process's memory splits (package memory,
// read from /proc/PID/smaps) as MemoryFacts.Split (SplitOf): the memory
// rules on what the GC cannot see word their findings as clrspy memory's
// judgement does.
package triage
