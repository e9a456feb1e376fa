package main

import (
	"github.com/spf13/cobra"
)

// commands lists the constructors of the top-level commands; each command
// file appends its own in an init function, so files do not collide.
var commands []func() *cobra.Command

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "clrspy",
		Short: "See what the .NET runtime does to an application",
		Long: `clrspy attaches to a running .NET process (or starts one, or reads a .nettrace
file) and reports, precisely, what the runtime does to it:

  gc         every stop-the-world pause: GC generation, reason, suspend and pause time
  top        a live terminal view of one process: pauses, heap, counters, locks, CPU
  profile    managed stack samples to pprof, speedscope, folded stacks, flame graphs
  heap       sampled objects followed across compacting GCs
  snapshot   a heap snapshot: retained sizes, why objects are alive, diffs
  locks      lock contention: which lock, how long, behind which owner
  requests   ASP.NET Core requests: latency per route, what each pause cost them
  exceptions exceptions by type, message, throw and catch site; caught or not
  threadpool thread-pool starvation: threads, queue, injections, blocking call sites
  stacks     every thread now: its stack, what it waits on; deadlocks (--watch)
  memory     where RSS goes: GC heap, runtime, native heap, stacks, images; the cgroup's limit
  triage     what is wrong with a process: ranked findings, evidence, next command
  stat       what a trace file contains
  ps         .NET processes this user can attach to
  record     save a live session to a .nettrace file
  run        start a program under a session from its first instruction
  report     one HTML page of everything: pauses, heap, locks, CPU (or --live)
  serve      watch every .NET process; export to Prometheus and OpenTelemetry
  version    clrspy's version and build

No agent is loaded into the target and no .NET SDK is needed.

Durations take a unit (500ms, 10s, 2m) or are a plain number of seconds;
sizes are in MiB (--buffer-mb, --ring-mb); without -o, reports go to standard
output, and binary or page formats refuse a terminal (docs/FLAGS.md).`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       versionLine(),
	}
	root.SetVersionTemplate("{{.Version}}\n")
	for _, c := range commands {
		root.AddCommand(c())
	}
	normalizeFlags(root)
	return root
}
