// Package procfs owns clrspy's reading of /proc: what it needs about a live
// target that its events do not carry (file mappings, thread and process
// names, arguments, environment, owner, namespaces, start time, the CPU it
// asks for), and about clrspy itself (/proc/self). One /proc/PID/maps
// parser (ParseMaps) for the profiler, the perf sampler's symbols (symtab)
// and the source package; one status, stat and environ reader each for
// discovery (ipc, serve) and the permission checks (perf). Other packages
// name /proc paths only to open files through them (/proc/PID/root,
// /proc/self/fd).
package procfs
