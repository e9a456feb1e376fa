package main

import (
	"github.com/spf13/cobra"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/capture"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/report"
	"github.com/clrspy/clrspy/source"
)

func init() { commands = append(commands, newLocksCmd) }

// wants is a spec's Enable list, never nil (wants(): enable nothing).
func wants(w ...func(*nettrace.Metadata) bool) []func(*nettrace.Metadata) bool {
	return append([]func(*nettrace.Metadata) bool{}, w...)
}

func newLocksCmd() *cobra.Command {
	var objectTypes bool
	c := &cobra.Command{
		Use:   "locks [FILE|-] [--pid N | --name NAME | -- COMMAND ARGS...]",
		Short: "Lock contention: which lock, how long, behind which owner, from which code",
		Long: `locks pairs the runtime's ContentionStart/ContentionStop events (a thread that
spun on a held Monitor and now waits) and reports, per lock: the number of
waits, total, mean and maximum wait, a wait histogram, the locked object's type
when the stream names it, the threads that owned the lock while others waited,
and the stacks that waited longest; per thread: the time it spent waiting.
Waits still open when the stream ends are listed as still waiting.

Lock ids, objects and owners need .NET 8 or later (ContentionStart v2); older
runtimes give durations and stacks only. The owner is shown as an OS thread id;
when the runtime reports a Thread address or managed id, it is mapped through
the thread events, and the report says when it cannot be.

The runtime names no type for a lock's object. --object-types (live sessions)
also asks for the first allocation of every type with its name and matches the
lock's object by address: it names objects allocated while recording (launch a
program with -- COMMAND to see them all) that no GC moved before their lock
was first contended, at the cost of one event per type (and per 10 ms of
allocation of it) with a stack.

Output: a text report (default), --json, or --format pprof (a contention
profile with sample types contentions/count and delay/nanoseconds, readable by
go tool pprof).`,
		Example: `  clrspy locks app.nettrace
  clrspy locks --pid 1234 --duration 30s
  clrspy locks --json app.nettrace | jq '.locks[0]'
  clrspy locks --format pprof -o locks.pb.gz -- dotnet app.dll && go tool pprof -top locks.pb.gz`,
	}
	t, o := addSectionFlags(c, 1, report.LocksSection.Formats())
	c.Flags().BoolVar(&objectTypes, "object-types", false, "live sessions: also record sampled allocations with type names to name the locks' object types")
	c.RunE = o.runE(func(cmd *cobra.Command, args []string) error { return runLocks(cmd, t, args, o, objectTypes) })
	return c
}

func runLocks(cmd *cobra.Command, t *targetFlags, args []string, o *reportFlags, objectTypes bool) error {
	job := capture.NewLocks(objectTypes)
	r, err := runSet(cmd, t, args, job.Set(), setRun{onOpen: func(st *source.Stream) []analysis.Analyzer {
		if st.Live() {
			// Thread names and native modules, from /proc while it runs.
			job.Watch(st.Pid)
		}
		if st.Live() {
			// The locks' object types from the target's memory (.NET 9+).
			job.NameTypes(st.Pid)
		}
		return nil
	}})
	if job.Set().Header() == nil {
		return err
	}
	res := job.Result()
	if err != nil {
		return err
	}
	if r.st.Live() && !objectTypes && len(res.Locks) > 0 && res.Locks[0].ObjectType == "" && res.Locks[0].ID != 0 {
		res.Notes = append(res.Notes, "the locks' object types are unknown: --object-types records what names them")
	}
	return r.writeAs(cmd, o, report.LocksSection.Writers(r.report(), res))
}
