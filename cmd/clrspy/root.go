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

  gc       every stop-the-world pause: GC generation, reason, suspend and pause time
  top      a live terminal view of one process: pauses, heap, counters, locks, CPU
  profile  managed stack samples to pprof, speedscope, folded stacks, flame graphs
  heap     sampled objects followed across compacting GCs
  locks    lock contention: which lock, how long, behind which owner
  triage   what is wrong with a process: ranked findings, evidence, next command
  stat     what a trace file contains
  ps       .NET processes this user can attach to
  record   save a live session to a .nettrace file
  run      start a program under a session from its first instruction

No agent is loaded into the target and no .NET SDK is needed.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       versionLine(),
	}
	root.SetVersionTemplate("{{.Version}}\n")
	for _, c := range commands {
		root.AddCommand(c())
	}
	return root
}
