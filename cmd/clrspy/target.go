package main

import (
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/ipc"
	"github.com/clrspy/clrspy/report"
	"github.com/clrspy/clrspy/source"
)

// targetFlags are the flags every analysis command takes to say where its
// events come from; with the positional arguments they make a source.Spec.
type targetFlags struct {
	pid      int
	name     string
	duration time.Duration
	bufferMB uint32
	threads  int
}

// addTargetFlags registers the target flags on cmd.
func addTargetFlags(cmd *cobra.Command) *targetFlags {
	t := &targetFlags{threads: 1} // addThreadsFlag lets a command change it
	f := cmd.Flags()
	f.IntVar(&t.pid, "pid", 0, "attach to the .NET process with this id")
	f.StringVar(&t.name, "name", "", "attach to the .NET process with this name")
	f.DurationVar(&t.duration, "duration", 0, "stop a live session after this long (0: until Ctrl-C or the target exits); a program started with -- is then sent SIGTERM")
	f.Uint32Var(&t.bufferMB, "buffer-mb", 256, "runtime-side event buffer of a live session, in MiB")
	return t
}

// addReadFlags adds the target's flags and --threads (default threads)
// to a command that reads a stream.
func addReadFlags(cmd *cobra.Command, threads int) *targetFlags {
	t := addTargetFlags(cmd)
	addThreadsFlag(cmd, &t.threads, threads)
	return t
}

// addSectionFlags adds addReadFlags' and the report's flags (formats: its
// --format help) to a command that writes one report section.
func addSectionFlags(cmd *cobra.Command, threads int, formats string) (*targetFlags, *reportFlags) {
	return addReadFlags(cmd, threads), addReportFlags(cmd, formats)
}

// addThreadsFlag registers --threads on a command that reads trace files,
// with the default def: 0 (one decoder per core) for the commands that
// skip most events (gc, heap, profile: a quarter less wall time on this
// project's 2-core machine for a fifth more CPU), 1 for those that take
// every event, whose one goroutine merging and analysing is the
// bottleneck (stat, locks, report: no gain measured). docs/PERFORMANCE.md,
// Scale.
func addThreadsFlag(cmd *cobra.Command, n *int, def int) {
	zero := "0: one per core"
	if def == 0 {
		zero = "default 0: one per core; 1 leaves the other cores alone" // cobra prints no "(default 0)"
	}
	usage := "decode a trace file on this many goroutines (" + zero + ")"
	if cmd.Flags().Lookup("pid") != nil {
		// Only for commands that have live sessions (stat has none).
		usage += "; live sessions are read on one"
	}
	cmd.Flags().IntVar(n, "threads", def, usage)
}

// readerThreads is the decoder count a --threads value asks for.
func readerThreads(n int) (int, error) {
	switch {
	case n < 0:
		return 0, fmt.Errorf("--threads %d: want 0 (one per core) or more", n)
	case n == 0:
		return runtime.GOMAXPROCS(0), nil
	}
	return n, nil
}

// live reports whether the flags and arguments name a live target.
func (t *targetFlags) live(cmd *cobra.Command) bool {
	return cmd.ArgsLenAtDash() >= 0 || t.pid != 0 || t.name != ""
}

// spec turns flags and arguments (a file, "-", or a command after "--")
// into a source.Spec.
func (t *targetFlags) spec(cmd *cobra.Command, args []string, providers []ipc.Provider) (source.Spec, error) {
	threads, err := readerThreads(t.threads)
	if err != nil {
		return source.Spec{}, err
	}
	s := source.Spec{Pid: t.pid, Name: t.name, Duration: t.duration, BufferMB: t.bufferMB, Providers: providers, Threads: threads,
		Stdin: inputStdin(), ProgramStdinIsTerminal: isTerminal(os.Stdin), Notice: notice}
	if dash := cmd.ArgsLenAtDash(); dash >= 0 {
		if dash > 0 {
			return s, fmt.Errorf("unexpected argument %q before --", args[0])
		}
		if len(args) == 0 {
			return s, fmt.Errorf("no command after --")
		}
		s.Argv = args
		return s, nil
	}
	if len(args) > 1 {
		return s, fmt.Errorf("one trace file at a time (got %d arguments)", len(args))
	}
	if len(args) == 1 {
		s.File = args[0]
	}
	return s, nil
}

// open opens the target of the flags and args with providers (spec, then
// openTarget).
func (t *targetFlags) open(cmd *cobra.Command, args []string, providers []ipc.Provider) (*source.Stream, func(), error) {
	spec, err := t.spec(cmd, args, providers)
	if err != nil {
		return nil, nil, err
	}
	return openTarget(spec)
}

// openSet opens the target of the flags and args for set: the Set's
// providers, and with keep the Set's Keep (a file's reader skips the
// events none of its analyses reads; without, every event reaches them:
// an analysis that times the stream by any event's). edit, when given,
// adjusts the spec before it opens.
func (t *targetFlags) openSet(cmd *cobra.Command, args []string, set *analysis.Set, keep bool, edit func(*source.Spec)) (*source.Stream, func(), error) {
	spec, err := t.spec(cmd, args, set.Providers())
	if err != nil {
		return nil, nil, err
	}
	if keep {
		spec.Keep = set.Keep()
	}
	if edit != nil {
		edit(&spec)
	}
	return openTarget(spec)
}

// openTarget opens the target and, for a live session, passes SIGINT and
// SIGTERM on to it (the first stops the session so the rundown flushes, a
// second drops it). Close the stream's signal watch with the returned
// function once the stream has ended.
func openTarget(spec source.Spec) (*source.Stream, func(), error) {
	st, err := source.Open(spec)
	if err != nil {
		return nil, nil, err
	}
	if st.Live() {
		return st, st.InterruptOnSignals(), nil
	}
	return st, showProgress(st), nil
}

// notice prints a one-line notice on stderr.
func notice(msg string) { fmt.Fprintln(os.Stderr, "clrspy:", msg) }

// warn prints a one-line warning on stderr.
func warn(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "clrspy: warning: "+format+"\n", args...)
}

// run reads st to its end through the analyses and describes the input.
// A cut stream is not an error (the input says it is partial).
func run(st *source.Stream, stopWatch func(), as ...analysis.Analyzer) (report.Input, error) {
	end, err := st.Run(as...)
	stopWatch()
	var stats analysis.Stats
	for _, a := range as {
		stats.Add(a.Stats())
	}
	in := report.NewInput(st.Name, st.Live(), end, stats)
	if end.TargetExited && st.Kind == source.Attach {
		notice(fmt.Sprintf("%s exited: the session ended with it", st.Name))
	}
	return in, err
}

// finish ends a command after its report was written (err is the
// report's error): the partial-input warning goes to stderr (the report
// says so too), the stream is closed, and a launched program's non-zero
// exit status is passed on.
func finish(st *source.Stream, in report.Input, err error) error {
	cerr := st.Close()
	for _, p := range in.Partial {
		warn("%s: %s", st.Name, p)
	}
	if err != nil {
		return err
	}
	if cerr != nil && !st.Live() {
		return cerr
	}
	if code := st.ExitCode(); code != 0 {
		return &exitError{code: code}
	}
	return nil
}

// isTerminal reports whether f is a terminal.
func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }
