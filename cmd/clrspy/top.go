package main

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/spf13/cobra"

	"github.com/clrspy/clrspy/capture"
	"github.com/clrspy/clrspy/internal/monitor"
	"github.com/clrspy/clrspy/internal/top"
	"github.com/clrspy/clrspy/internal/tui"
	"github.com/clrspy/clrspy/source"
)

func init() { commands = append(commands, newTopCmd) }

// topOptions are the flags of clrspy top.
type topOptions struct {
	info, warn, slowSuspend time.Duration
	locks, cpu              bool
	exceptions              bool
	threadPool              bool
	requests                bool
	programOutput           string
	snapshotEvery           time.Duration
	out                     string
	record                  string
	refresh                 time.Duration
}

// errTopNoTerminal is top's one line when standard output is not a
// terminal.
var errTopNoTerminal = errors.New("top needs a terminal (standard output is not one): use clrspy gc for a pause log and report, or clrspy serve for metrics")

func newTopCmd() *cobra.Command {
	o := &topOptions{}
	c := &cobra.Command{
		Use:   "top [--pid N | --name NAME | -- COMMAND ARGS...]",
		Short: "A live terminal view of a process's GC pauses, heap, locks, CPU and counters",
		Long: `top shows a .NET process live, refreshed every second: the runtime version and
GC flavor, the allocation rate, each generation's size after the last GC, GCs
per generation, the share of time paused over the last 1, 10 and 60 s and since
attach, the longest pause; the latest GCs (colored with clrspy gc's --info and
--warn thresholds, slow suspensions marked "!", non-GC suspensions as rows of
their own); a pause histogram per generation and a timeline; the runtime's
counters (thread pool, exceptions, JIT, working set); the most contended locks
with --locks, the methods with the most CPU samples with --cpu, the
exceptions thrown most with their throw sites with --exceptions; with
--threadpool the thread pool's threads, queue, injections and starvation
episodes (the t panel) and a banner while the pool starves.

Keys: q quit (the session stops cleanly, the target keeps running), space
freeze/unfreeze the display (collection goes on), g/l/c/x/r the GC table, locks,
methods, exceptions or requests, s the GC table's sort (time, pause, generation), / filter it by a
generation or a reason, ? help.

A program started with -- gets no terminal: its output goes to
--program-output FILE (default: discarded). When the target exits, the last
screen stays, with its exit status, until q. --snapshot-every D -o FILE
appends each screen's data as a JSON line for scripts; --record FILE saves the
session's events (the other commands read the same events the screen showed).
top needs a terminal; without one, use clrspy gc or clrspy serve.`,
		Example: `  clrspy top --pid 1234
  clrspy top --name MyService --locks --cpu
  clrspy top --program-output app.log -- dotnet app.dll
  clrspy top --pid 1234 --snapshot-every 5s -o top.jsonl
  clrspy top --pid 1234 --record seen.nettrace && clrspy gc seen.nettrace`,
	}
	t := addTargetFlags(c)
	f := c.Flags()
	f.DurationVar(&o.info, "info", 10*time.Millisecond, "pauses from this long are colored as Info (yellow), as clrspy gc logs them")
	f.DurationVar(&o.warn, "warn", 100*time.Millisecond, "pauses from this long are colored as Warn (red)")
	f.DurationVar(&o.slowSuspend, "slow-suspend", 5*time.Millisecond, `mark suspensions (time to stop threads) longer than this with "!"`)
	f.BoolVar(&o.locks, "locks", false, "also collect lock contention (the l panel)")
	f.BoolVar(&o.exceptions, "exceptions", false, "also count every exception with its stack (the x panel: the types thrown most and their throw sites; costly at thousands a second, docs/PERFORMANCE.md)")
	f.BoolVar(&o.threadPool, "threadpool", false, "also follow the thread pool (the t panel: threads, queue, injections, starvation; a banner while it starves)")
	f.BoolVar(&o.requests, "requests", false, "also follow ASP.NET Core's requests (Kestrel's events: the r panel: per route count, latency, the requests GC pauses hit)")
	f.BoolVar(&o.cpu, "cpu", false, "also run the sample profiler clrspy profile uses (the c panel: top methods)")
	f.StringVar(&o.programOutput, "program-output", "", "write a program started with -- its stdout and stderr to this file (default: discarded)")
	f.DurationVar(&o.snapshotEvery, "snapshot-every", 0, "append the screen's data to -o FILE as a JSON line this often")
	f.StringVarP(&o.out, "output", "o", "", "the file --snapshot-every appends to")
	f.StringVar(&o.record, "record", "", "also save the session's event stream to this .nettrace file, as clrspy record does (what the screen showed, for clrspy gc, profile, locks...)")
	f.DurationVar(&o.refresh, "refresh", time.Second, "how often the screen is refreshed")
	markOutput(c, "record", "file")
	markOutput(c, "program-output", "file")
	c.RunE = func(cmd *cobra.Command, args []string) error {
		switch {
		case o.info > o.warn:
			return fmt.Errorf("--info (%v) must not be longer than --warn (%v)", o.info, o.warn)
		case o.snapshotEvery < 0 || o.refresh < 0:
			return fmt.Errorf("--snapshot-every and --refresh must not be negative")
		case o.snapshotEvery > 0 && o.out == "":
			return fmt.Errorf("--snapshot-every needs -o FILE")
		case o.snapshotEvery == 0 && o.out != "":
			return fmt.Errorf("-o FILE takes the --snapshot-every lines: give --snapshot-every too")
		case o.programOutput != "" && cmd.ArgsLenAtDash() < 0:
			return fmt.Errorf("--program-output applies to a program started with -- COMMAND")
		case o.out == "-" || o.record == "-" || o.programOutput == "-":
			return fmt.Errorf("standard output is the screen: give -o, --record and --program-output a file")
		case o.record != "" && !t.live(cmd):
			return fmt.Errorf("--record applies to live sessions (--pid, --name or -- COMMAND)")
		}
		if !isTerminal(os.Stdout) {
			return errTopNoTerminal
		}
		return runTop(cmd, t, args, o)
	}
	return c
}

// openLive opens a file top writes beside the screen (top.OpenFile).
func openLive(path string, flag int) (*os.File, error) { return top.OpenFile(path, flag) }

func runTop(cmd *cobra.Command, t *targetFlags, args []string, o *topOptions) error {
	mopts := monitor.Options{Locks: o.locks, CPU: o.cpu, Exceptions: o.exceptions, ThreadPool: o.threadPool, Requests: o.requests}
	spec, err := t.spec(cmd, args, monitor.Providers(&mopts))
	if err != nil {
		return err
	}
	notes := &top.Notes{}
	spec.Notice = notes.Add
	files, err := top.OpenFiles(&spec, o.programOutput, o.out)
	//lint:ignore SA5001 Files holds what opened before an error too: closed either way
	defer files.Close()
	if err != nil {
		return err
	}
	var rec *capture.Tee
	if o.record != "" {
		// As clrspy record writes it (capture.Tee): every byte of the
		// stream, before the screen's reader sees it.
		if rec, err = capture.NewTee(&spec, o.record, nil, 0); err != nil {
			return err
		}
		defer rec.Abort() // a no-op once closed
	}
	st, err := source.Open(spec)
	if err != nil {
		return err
	}
	if rec != nil {
		rec.Opened(st)
	}
	defer top.Watch(st, &mopts)()
	mon := monitor.New(st.Header(), mopts)
	if o.cpu && st.Live() {
		top.Rundown(st, mon, notes)
	}
	cfg := top.Options{
		Stream: st, Monitor: mon, Refresh: o.refresh, Notes: notes, SnapshotEvery: o.snapshotEvery,
		View: tui.Options{Info: o.info, Warn: o.warn, SlowSuspend: o.slowSuspend, Locks: o.locks, CPU: o.cpu, Exceptions: o.exceptions, ThreadPool: o.threadPool, Requests: o.requests,
			Notes: files.View, Location: time.Local, Renderer: lipgloss.NewRenderer(os.Stdout)},
	}
	files.Opened(st, &cfg)
	if st.Live() && st.Kind != source.Listen && st.Pid > 0 {
		cfg.Memory = top.MemoryOf(st.Pid)
	}
	res, err := top.Run(cmd.Context(), cfg)
	if err != nil {
		return err
	}
	if rec != nil {
		if err := rec.Close(res.End); err != nil {
			return err
		}
	}
	// The screen is gone: what it said that matters afterwards goes to
	// stderr.
	if res.TargetRunning {
		msg := fmt.Sprintf("%s (pid %d) keeps running", source.ProcName(st.Pid), st.Pid)
		if o.programOutput != "" {
			msg += "; its output goes to " + o.programOutput
		}
		notice(msg)
	}
	if n := res.End.EventsLost; n > 0 {
		warn("%s: %d events lost (the runtime's buffer overflowed): the figures missed what they carried", st.Name, n)
	}
	if res.Err != nil {
		return res.Err
	}
	if res.SnapshotErr != nil {
		return res.SnapshotErr
	}
	if st.Kind == source.Launch && !res.TargetRunning && res.ExitCode != 0 {
		return &exitError{code: res.ExitCode}
	}
	return nil
}
