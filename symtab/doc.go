// Package symtab names native code and describes a live process's address
// space for the perf_event sampler: the executable mappings of
// /proc/PID/maps, the ELF files behind them (read through /proc/PID/root,
// so files inside a container resolve), their symbols (.symtab, a separate
// debug file found by build id or .gnu_debuglink, then .dynsym) and their
// call-frame information (an unwind.Table per file), the runtime's perf map
// (/tmp/perf-PID.map) for JIT'd code, the ReadyToRun method map of the
// managed images mapped (package clrmeta) for precompiled code no method
// event named, and kernel symbols from
// /proc/kallsyms.
//
// Files are loaded once per process and shared by every mapping of them;
// symbols and CFI are parsed on first use. Process is not safe for
// concurrent use: the sampler drives it from one goroutine.
package symtab
