// Package procfs reads what clrspy needs from /proc about a live target
// that its events do not carry: file mappings, thread names, process names.
// One parser for the profiler, the perf sampler and the source package.
package procfs
