// Package serve is the long-running form of clrspy (`clrspy serve`): a
// daemon that finds the .NET processes it may watch, keeps one light
// EventPipe session and one monitor.Monitor on each, and exposes them over
// HTTP: Prometheus metrics (package metrics), pull-mode profiles in Go's
// /debug/pprof convention, the pause log, and pause-triggered captures.
//
// What it owns: the supervisor of targets. Discovery (attach mode) lists
// /proc once a second and watches the diagnostics socket directories with
// inotify, so a new process is seen within a second or two, in other pid
// and mount namespaces too when run as root; only processes never seen
// before are probed, and the socket directory is listed once, then kept
// up to date from inotify, so an idle host costs next to nothing. Listen
// mode (Config.DiagnosticPort) accepts runtimes on a reverse diagnostic
// port, opens each one's session while it waits suspended, then resumes
// it. Every target gets a session goroutine that opens the session,
// feeds the monitor, and on a failure retries with backoff while the
// process lives; a session that fails never affects the others. A target
// whose process exited is kept (clrspy_target_up 0) for Config.Grace, then
// dropped with its series; a restarted process is a new target. Stop (the
// context given to Run) stops every session cleanly: the runtime writes
// its rundown and the target runs on. A killed daemon leaves its targets
// running: the runtime ends a session whose reader is gone.
//
// Totals run from the process start, as the OpenTelemetry conventions
// define them: a session on a process that ran 10 s before the attach
// (meterMinAge) also asks for the runtime's System.Runtime meter (.NET
// 9+), whose first publication tells what the runtime counted before the
// attach (monitor.BeforeSession); younger processes, whose exit soon after
// a meter session may hang on .NET 10, get the EventCounters only at
// first, and a second, short meter session once they are 30 s old
// (seedLater), whose totals the monitor aligns by the GC events' own
// numbering (monitor.SeedFrom). Until then a total the numbering shows
// short (GCs before the attach) is not exported.
//
// Memory: every Config.MemoryInterval each visible target's RSS is split
// by package memory from its /proc/PID/smaps (and its memory cgroup read),
// the last splits kept for the metrics and clrspy_findings; /triage reads
// one at each end of its window. No session: the GC's range by layout.
//
// HTTP (Handler): /metrics, /healthz, /targets (JSON), /debug/pprof/profile
// and /debug/pprof/contention (a second, short session on one target: a
// CPU profile through the runtime's sample profiler, or its lock waits),
// /triage (one target's findings over S seconds: the window's events of
// its session through triage's own analyses, a tap on the session, as
// `clrspy triage --pid` judges; no second session; a heap snapshot's GC,
// marked by the snapshot session's gcpause, kept out of the application's
// induced GCs there, in clrspy_findings and in the pause log),
// /debug/stacks (every thread's stack and wait now: `clrspy stacks`' job,
// package stacksnap, on a second session of its own),
// /debug/pprof/heap (a heap snapshot, package heapgraph: its session makes
// the runtime induce a blocking gen2 GC and walk the heap; the profile's
// stacks are retention paths; one per target at a time; with
// the leak watch (Config.LeakWatch, on by default: gen2 after gen2 GCs
// judged over minutes, leakwatch.go) also takes a pair when gen2 grows
// steadily, at most one pair per LeakWatch.Every, the second diffed with
// the first's per-type table; Config.SnapshotOnGen2Growth is the eager
// watch instead, a snapshot after each PCT % of growth),
// and the live web view at / (HandlerOptions.Web, fed through
// Config.Sessions by the same monitors: no second session; with
// Config.CPUProfile each target is also sampled by the perf sampler in
// windows, each its own short perf session, and each window's profile is
// the page's flame graph). Every endpoint is read-only.
//
// Exposure (docs/SECURITY.md): HandlerOptions.Token requires a bearer
// token on every endpoint but /healthz (LoadToken reads it, or writes a
// new one on first start); HandlerOptions.LoopbackHosts answers loopback
// Host names only (DNS rebinding); Server bounds a request's time and
// LimitListener the connections open at once (503 past the cap). A
// profile's seconds are parsed strictly. A listen-mode runtime's pid is
// the kernel's (ipc checks SO_PEERCRED against its advertise): the perf
// sampler and /proc are only aimed at that pid. Failed captures are
// counted by reason, warned about once per streak and backed off.
package serve
