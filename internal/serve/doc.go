// Package serve is the long-running form of clrspy (`clrspy serve`): a
// daemon that finds the .NET processes it may watch, keeps one light
// EventPipe session and one monitor.Monitor on each, and exposes them over
// HTTP: Prometheus metrics (package metrics), pull-mode profiles in Go's
// /debug/pprof convention, the pause log, and pause-triggered captures.
//
// What it owns: what serve adds on the targets of its fleet (package
// fleet: discovery, attach mode and listen mode, the session loop and its
// retries, the totals since the process start, the memory split, one
// Source per target), as the fleet's Watcher of every session: the pause
// log, the pause-triggered captures, the leak watch and the CPU profile
// windows; its per-target state (request slots, the leak watch's) is kept
// in the target's fleet.Source. metrics exports the fleet's targets and
// the live web view (Config.Web) follows its sessions.
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
// and the live web view at / (Config.Web: the same monitors, no second
// session; with Config.CPUProfile each target is also sampled by the perf
// sampler in windows, each beside a short session of its own through
// capture's job, and each window's profile is the page's flame graph). Every endpoint is read-only.
//
// Exposure (docs/SECURITY.md): Config.Validate decides it from the
// flags (loopback by default; what needs a token, TLS or
// --insecure-no-auth) and Exposure.ResolveToken reads or makes the token;
// HandlerOptions.Token requires a bearer
// token on every endpoint but /healthz (LoadToken reads it, or writes a
// new one on first start); HandlerOptions.LoopbackHosts answers loopback
// Host names only (DNS rebinding); Server bounds a request's time and
// LimitListener the connections open at once (503 past the cap). A
// profile's seconds are parsed strictly. A listen-mode runtime's pid is
// the kernel's (ipc checks SO_PEERCRED against its advertise): the perf
// sampler and /proc are only aimed at that pid. Failed captures are
// counted by reason, warned about once per streak and backed off.
package serve
