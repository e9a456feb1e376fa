// Package perf is clrspy's mixed-mode CPU sampler on Linux's perf_event
// interface (x86-64, no cgo). It samples every thread of a target process
// without stopping it, unwinds each sample's user stack through JIT'd code
// (frame pointers) and native libraries (DWARF CFI, package unwind), names
// managed frames from an EventPipe session's method events (the shared
// stacks.Symbols table) and native ones from ELF files (package symtab),
// labels samples taken while a GC held the runtime stopped, and produces a
// *stacks.Profile that every profile writer in package report accepts.
//
// It owns:
//   - permission probing (Check): whether perf_event_open may sample a pid,
//     and a one-line reason when it may not (perf_event_paranoid, missing
//     CAP_PERFMON, another user's process, seccomp);
//   - the Sampler: per thread × CPU events (cpu-clock by default, cycles
//     where the hardware has it) writing into one mmapped ring buffer per
//     CPU, read in place; threads that appear later are picked up from
//     fork records and /proc/PID/task; lost records are counted; the
//     target's exit ends the run;
//   - the Builder: unwinding (allocation-free per sample), aggregation,
//     GC labels, symbolization at Result;
//   - off-CPU time (Options.OffCPU, offcpu.go, offcpu_build.go): every
//     switch-out of a sampled thread (the sched:sched_switch tracepoint,
//     per thread × CPU, into rings of their own; the kernel's callchains
//     only while the thread blocks at places not walked before, the walk
//     of a known place reused: offcpu.go says why) walked like a sample
//     and weighed by the time until the thread's switch-in
//     (PERF_RECORD_SWITCH), for a wall-clock profile (stacks.Sample.OffCPU;
//     pprof's cpu and off_cpu sample types; blocked or runnable, from the
//     switch-out record's preemption flag). Needs root or CAP_PERFMON
//     and tracefs (mounted privately for the id's lookup when clrspy may);
//     otherwise Access.OffCPUNote says why. A thread already blocked
//     when its events are opened is counted from then, under the one
//     frame its system call returns to (its registers are not to be had
//     without stopping it), and a note says so;
//   - Profile / Start: the whole thing for one pid, EventPipe session
//     included;
//   - the Walker (threadstack.go, for clrspy stacks): one thread's stack
//     as it is now, without stopping it: its kernel frames from
//     /proc/PID/task/TID/stack (root), its user stack walked by the
//     Builder's unwinder from the stack and instruction pointers
//     /proc/PID/task/TID/syscall gives of a thread in a system call, over
//     the stack read from /proc/PID/mem (a running thread has none);
//   - the allocator probes (uprobe.go, AllocTracer, for clrspy memory
//     --native): uprobes on the target's libc malloc, calloc, realloc and
//     free and uretprobes on the first three (the uprobe PMU, per thread,
//     a ring each), records handed on in time order as AllocEvents, the
//     sampled entries' stacks unwound by the Builder (stackOf) and named
//     by it (Frames). Every call of those functions traps into the
//     kernel while the probes are on (11 µs a malloc/free pair measured
//     in a VM), whatever is sampled: the decision is the caller's, per
//     record.
//
// Sample times are CLOCK_MONOTONIC (perf_event_attr.use_clockid), the clock
// the .NET runtime's EventPipe timestamps use on Linux, so samples line up
// with GC events without conversion beyond the session's start.
//
// Use it whole:
//
//	p, err := perf.Profile(ctx, pid, perf.ProfileOptions{Duration: 30 * time.Second})
//	// err is an *UnavailableError (one-line reason) when perf_event cannot
//	// sample pid; p is a *stacks.Profile for report.WritePprof & co.
//
// or in parts, next to an EventPipe stream opened elsewhere with
// SessionProviders: Open a Sampler, NewBuilder(pid, header, symbols, ...),
// run Sampler.Run(ctx, builder.Sample) on one goroutine while the stream
// feeds the symbols and builder.Event on another, then builder.Finish and
// builder.Result. Check(pid, opts) alone answers "can perf sample this?".
package perf
