// Package stacks turns the runtime's sample-profiler events into a
// profile (`clrspy profile` writes it; the package is named for what it
// owns, stacks, because every analysis with stacks names them through its
// Symbols): it owns the symbol table built from method and module events
// (MethodLoadVerbose while recording, MethodDCStart/DCEndVerbose rundown,
// every version of a method over time), per-thread sample aggregation, the
// weights (sample counts and the thread time a sample stands for), the
// explicit [native code], [truncated] and [unknown] frames, the
// managed-only filter, and a byte-compatible mode for the dotnetdiag
// folded-stack output.
//
// It does no I/O: a Builder consumes *nettrace.Event values from a file or
// a live session alike, and Profile returns the result for package report
// to write.
package stacks
