package main

import (
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/capture"
	"github.com/clrspy/clrspy/hang"
	"github.com/clrspy/clrspy/internal/stacksnap"
	"github.com/clrspy/clrspy/report"
	"github.com/clrspy/clrspy/source"
)

func init() { commands = append(commands, newStacksCmd) }

func newStacksCmd() *cobra.Command {
	var watch, sampleFor, threshold, after time.Duration
	c := &cobra.Command{
		Use:   "stacks [FILE|-] --pid N|--name NAME [--watch D] | -- COMMAND [--after D]",
		Short: "Every thread now: its stack, what it waits on, threads grouped, deadlocks found",
		Long: `stacks answers "what are all my threads doing?" for a live (or hung) process.

Every OS thread of the process (/proc/PID/task) is listed with its name, its
managed thread id and role (pool worker, finalizer, GC) when the runtime names
it, the kernel's state (running, sleeping, disk, stopped) and the system call
it is blocked in, its managed stack (newest frame first: one sample of the
runtime's sample profiler, as dotnet-stack takes it, over --sample-for, 100 ms
by default, from the first sample on) and what it waits on:
  monitor      Monitor.Enter (a lock statement)      lock   System.Threading.Lock
  wait_handle  WaitOne, Task.Wait (sync_over_async marked), Monitor.Wait, Join
  sleep        Thread.Sleep                          io     socket, pipe, file, console, disk
  pool_idle    a thread-pool worker waiting for work futex  native code on a futex
  other        blocked, nothing says on what         (none: running)
Threads with identical stacks are grouped with their count.

A lock's owner is named by the runtime's contention events (ContentionStart v2,
.NET 8+), which fire only when a wait begins. --watch D keeps a session of lock
and wait-handle events for D and keeps a wait-for graph: a cycle of threads
each waiting for a lock the next one holds, every wait open for --threshold
(1 s), is a DEADLOCK, reported with each thread, the lock, its owner and the
waiting stack; a chain of waiters ending at a thread blocked on something else
is a HANG CHAIN. A cycle is announced on stderr as soon as it forms, and the
watch ends once it has lasted --threshold (a DEADLOCK line on stderr). Without
--watch, waits began before clrspy attached: two or more threads stuck in
Monitor.Enter for the whole sample at different call sites are reported as a
SUSPECTED deadlock, with the reason (their owners cannot be named).

Output: text (fits 100 columns), --json (threads, groups, deadlocks,
hang_chains, by_wait_kind and the envelope every command has) or --format
folded: one line per distinct stack, root first, ending in what the threads
wait on ("[monitor]"), then the number of threads (flamegraph.pl reads it).

-- COMMAND starts the program, waits --after (2 s), then does the same to it
and sends it SIGTERM.`,
		Example: `  clrspy stacks --pid 1234
  clrspy stacks --pid 1234 --json | jq '.groups[0]'
  clrspy stacks --name MyService --watch 10s      # find a deadlock as it forms
  clrspy stacks --pid 1234 --format folded | flamegraph.pl > threads.svg
  clrspy stacks --after 5s -- dotnet MyService.dll  # its threads 5 s after the start`,
	}
	t := addTargetFlags(c)
	o := addReportFlags(c, "text, json or folded (one line per distinct stack, root first, with its thread count)")
	f := c.Flags()
	f.DurationVar(&watch, "watch", 0, "keep a session of lock and wait-handle events this long (or until a deadlock has lasted --threshold) and report the deadlocks that form")
	f.DurationVar(&sampleFor, "sample-for", 100*time.Millisecond, "how long the sample profiler runs after its first sample")
	f.DurationVar(&threshold, "threshold", time.Second, "--watch: how long every wait of a cycle must be open to be a deadlock")
	f.DurationVar(&after, "after", 2*time.Second, "with -- COMMAND: look at its threads this long after the start")
	var folded bool
	runE := o.runE(func(cmd *cobra.Command, args []string) error {
		if o.format == "pprof" {
			return fmt.Errorf("stacks writes text, json or folded (got --format pprof)")
		}
		switch {
		case watch < 0:
			return fmt.Errorf("--watch %v: must not be negative", watch)
		case sampleFor <= 0:
			return fmt.Errorf("--sample-for %v: must be positive", sampleFor)
		case threshold <= 0:
			return fmt.Errorf("--threshold %v: must be positive", threshold)
		case after < 0:
			return fmt.Errorf("--after %v: must not be negative", after)
		case cmd.ArgsLenAtDash() > 0:
			return fmt.Errorf("unexpected argument %q before --", args[0])
		case cmd.ArgsLenAtDash() == 0 && len(args) == 0:
			return fmt.Errorf("no command after --")
		case cmd.ArgsLenAtDash() == 0 && (t.pid != 0 || t.name != ""):
			return fmt.Errorf("give either a command after -- or --pid/--name, not both")
		case watch > 0 && !t.live(cmd):
			return fmt.Errorf("--watch applies to a running process (--pid, --name)")
		case watch > 0 && t.duration > 0:
			return fmt.Errorf("give --watch or --duration, not both (--watch is the session's length)")
		}
		if cmd.ArgsLenAtDash() == 0 {
			// Started, left to run --after, then attached to by pid: a
			// session from its first instruction would see no thread yet.
			pid, end, err := startAfter(args, after)
			if err != nil {
				return err
			}
			defer end()
			t.pid = pid
		}
		return runStacks(cmd, t, args, o, folded, watch, sampleFor, threshold)
	})
	// folded is this command's own format (the others have none).
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if folded = o.format == "folded" && !o.asJSON; folded {
			o.format = "text"
		}
		return runE(cmd, args)
	}
	return c
}

func runStacks(cmd *cobra.Command, t *targetFlags, args []string, o *reportFlags, folded bool, watch, sampleFor, threshold time.Duration) error {
	providers := stacksnap.Providers()
	if watch > 0 {
		providers = stacksnap.WatchProviders()
		t.duration = watch
	} else if t.duration == 0 && t.live(cmd) {
		t.duration = stacksnap.MaxSession
	}
	var job *stacksnap.Job
	// stacksnap's job names its frames itself (its own symbol table, shared
	// with serve's /debug/stacks): the Set only opens the session.
	r, err := runSet(cmd, t, args, analysis.NewSet(), setRun{edit: func(s *source.Spec) { s.Providers, s.Argv = providers, nil }, onOpen: func(st *source.Stream) []analysis.Analyzer {
		opts := hang.Options{Threshold: threshold}
		stopAfter := sampleFor
		if watch > 0 {
			var once sync.Once
			opts.OnCycle = func(c hang.Cycle) {
				notice("deadlock forming: " + c.String())
				// Once its waits have lasted the threshold it is a
				// deadlock: the watch ends then, to report it.
				once.Do(func() { time.AfterFunc(threshold+200*time.Millisecond, st.Stop) })
			}
			// The session is open: what happens from now on is seen.
			notice(fmt.Sprintf("watching %s for %v: a deadlock is announced as it forms", st.Name, watch))
			stopAfter = 0
		}
		job = stacksnap.New(st, opts, stopAfter)
		return job.Analyzers()
	}})
	if err != nil {
		return err
	}
	procPid := 0
	if r.st.Live() {
		procPid = r.st.Pid
	}
	res := job.Result(procPid)
	d := &report.StacksDocument{Input: r.in, Pid: r.st.Pid, Result: res}
	if watch > 0 {
		for _, dl := range res.Deadlocks {
			if !dl.Suspected {
				notice(fmt.Sprintf("DEADLOCK: threads %v, every wait open %v or more (the report follows the threads' stacks)", dl.Threads, threshold))
			}
		}
		d.WatchMs = float64(r.span) / 1e6
		if r.st.Live() && !r.in.Truncated {
			// The events named the waits; a snapshot names every thread's
			// stack (the process may have ended with the watch).
			snap, span, err := stacksSnapshot(cmd, r.st.Pid, t.bufferMB, sampleFor)
			if err != nil {
				warn("no stacks after the watch: %v", err)
			} else {
				d.Result, d.SampleMs = hang.Merge(snap, res), span
			}
		}
	} else {
		d.SampleMs = float64(r.span) / 1e6
	}
	if r.st.Live() && watch == 0 && res.Sampled == 0 {
		warn("%s: the sample profiler sampled no thread within %v", r.st.Name, t.duration)
	}
	sec := report.StacksSection
	if folded {
		sec = report.StacksFoldedSection
	}
	return r.writeAs(cmd, o, sec.Writers(r.report(), d))
}

// stacksSnapshot samples every thread of pid once (a session of its own,
// after a --watch session) and returns the result and the session's span
// in milliseconds.
func stacksSnapshot(cmd *cobra.Command, pid int, bufferMB uint32, sampleFor time.Duration) (*hang.Result, float64, error) {
	t := &targetFlags{pid: pid, duration: stacksnap.MaxSession, bufferMB: bufferMB, threads: 1}
	st, stopWatch, err := t.open(cmd, nil, stacksnap.Providers())
	if err != nil {
		return nil, 0, err
	}
	d, err := stacksnap.Snapshot(st, pid, pid, sampleFor)
	stopWatch()
	if err != nil {
		st.Close()
		return nil, 0, err
	}
	if err := finish(st, d.Input, nil); err != nil {
		return nil, 0, err
	}
	return d.Result, d.SampleMs, nil
}

// startAfter starts the program args (stdio passed through) and returns
// its pid after it has run for after; end sends it SIGTERM and waits for
// it.
func startAfter(args []string, after time.Duration) (pid int, end func(), err error) {
	p, err := capture.StartProgram(args, os.Stdout)
	if err != nil {
		return 0, nil, err
	}
	time.Sleep(after)
	return p.Pid, p.Stop, nil
}
