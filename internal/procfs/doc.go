// Package procfs reads what clrspy needs from /proc about a live target
// that its events do not carry: file mappings, thread names, process names.
// One /proc/PID/maps parser (ParseMaps) for the profiler, the perf
// sampler's symbols (symtab) and the source package.
package procfs
