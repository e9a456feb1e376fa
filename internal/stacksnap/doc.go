// Package stacksnap is the snapshot job of `clrspy stacks` and serve's
// /debug/stacks: on an open session, the sample profiler's one sample per
// managed thread (package hang), stopped a while after its first sample,
// joined with what /proc says of every thread of the process, as one
// report.StacksDocument. Both callers run this code; only the opening of
// the session (flags, or serve's target) is theirs.
package stacksnap
