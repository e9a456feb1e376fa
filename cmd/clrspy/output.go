package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/report"
	"github.com/clrspy/clrspy/source"
	"github.com/clrspy/clrspy/stacks"
)

// openOutput returns stdout or the -o file, a report about st's process.
// closeOut(err) completes the file when the report was written without
// error (err == nil) and drops it otherwise, returning the first error: a
// failed report never leaves a partial file under the name asked for. The
// file is readable by its owner only when the process is another user's
// (outputPerm): a report holds its command line, names and stacks.
func openOutput(cmd *cobra.Command, st *source.Stream, path string) (w io.Writer, closeOut func(error) error, err error) {
	if path == "" {
		path = "-"
	}
	f, err := createOutput(path, cmd.OutOrStdout(), outputPerm(st))
	if err != nil {
		return nil, nil, err
	}
	return f, f.Finish, nil
}

// reportFormat resolves --json and --format (text, json or pprof) of the
// analysis commands, refusing binary pprof output to a terminal.
func reportFormat(cmd *cobra.Command, asJSON bool, format, out string) (string, error) {
	if asJSON {
		if cmd.Flags().Changed("format") && format != "json" {
			return "", fmt.Errorf("--json and --format %s contradict each other", format)
		}
		format = "json"
	}
	switch format {
	case "text", "json":
	case "pprof":
		if err := refuseTerminal(out, "--format pprof"); err != nil {
			return "", err
		}
	default:
		return "", fmt.Errorf("unknown --format %q: use text, json or pprof", format)
	}
	return format, nil
}

// refuseTerminal is the one rule for output meant for another program
// (pprof's gzipped protobuf, a nettrace stream, a speedscope or HTML
// file): without -o it goes to standard output, like every report, but
// not to a terminal, where it would only scramble the screen.
func refuseTerminal(out, what string) error {
	if (out == "" || out == "-") && isTerminal(os.Stdout) {
		return fmt.Errorf("%s writes a file for another program, not for a terminal: give -o FILE or redirect standard output (> FILE or | ...)", what)
	}
	return nil
}

// reportFlags are the output flags every analysis command has: --json,
// --format and -o.
type reportFlags struct {
	asJSON      bool
	format, out string
}

// addReportFlags adds them to c; formats is the --format help's list
// ("text, json or pprof").
func addReportFlags(c *cobra.Command, formats string) *reportFlags {
	o := &reportFlags{}
	o.add(c, formats, "write the report to this file instead of stdout")
	return o
}

// add adds the flags to c, with -o's help.
func (o *reportFlags) add(c *cobra.Command, formats, outHelp string) {
	c.Flags().BoolVar(&o.asJSON, "json", false, "print one JSON document (same as --format json)")
	c.Flags().StringVar(&o.format, "format", "text", "output format: "+formats)
	c.Flags().StringVarP(&o.out, "output", "o", "", outHelp)
}

// runE is an analysis command's RunE: the format resolved (reportFormat),
// then run.
func (o *reportFlags) runE(run func(cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		var err error
		if o.format, err = reportFormat(cmd, o.asJSON, o.format, o.out); err != nil {
			return err
		}
		return run(cmd, args)
	}
}

// analysisRun is an analysis command's session once read: the stream (still
// to be finished), what it said of itself, and its span of time.
type analysisRun struct {
	st    *source.Stream
	in    report.Input
	start time.Time     // the first event's wall-clock time
	span  time.Duration // first to last event
}

// report is what the run's report says of its session.
func (r *analysisRun) report() report.Run { return report.Run{In: r.in, Start: r.start, Span: r.span} }

// writeAs writes the run's report in the format o asks for (reportFormat
// resolved it).
func (r *analysisRun) writeAs(cmd *cobra.Command, o *reportFlags, f report.Writers) error {
	return r.write(cmd, o.out, f.Pick(o.format))
}

// setRun says how runSet opens and reads a Set's session: keep and edit
// as openSet's; onOpen, when set, is called once the stream is open (a
// /proc watcher, a notice) and the analyzers it returns, what needs the
// stream itself, are fed after the Set.
type setRun struct {
	keep   bool
	edit   func(*source.Spec)
	onOpen func(*source.Stream) []analysis.Analyzer
}

// runSet opens the target for set (openSet), starts the Set with the
// stream's header and reads the stream through it to its end: how every
// analysis command builds its session. On an error the stream is closed.
func runSet(cmd *cobra.Command, t *targetFlags, args []string, set *analysis.Set, how setRun) (*analysisRun, error) {
	st, stopWatch, err := t.openSet(cmd, args, set, how.keep, how.edit)
	if err != nil {
		return nil, err
	}
	set.Start(st.Header())
	as := []analysis.Analyzer{set}
	if how.onOpen != nil {
		as = append(as, how.onOpen(st)...)
	}
	in, err := run(st, stopWatch, as...)
	if err != nil {
		st.Close()
		return nil, err
	}
	end := st.End()
	return &analysisRun{st: st, in: in, start: st.Header().Time(end.FirstTimestamp),
		span: time.Duration(st.Header().DurationNanos(end.LastTimestamp - end.FirstTimestamp))}, nil
}

// withSymbols is a Set of one analysis that names its stacks through the
// Set's symbol table.
func withSymbols[A analysis.Analyzer](spec analysis.Spec, newAnalyzer func(*nettrace.Header, *stacks.Symbols) A) (*analysis.Set, *analysis.Ref[A]) {
	s := analysis.NewSet()
	sym := stacks.SymbolsIn(s)
	return s, analysis.Add(s, spec, func(h *nettrace.Header) A { return newAnalyzer(h, sym.Get()) })
}

// runSection runs the Set of one analysis (withSymbols: the exceptions
// and threadpool commands), and writes its result as section sec in the
// format o asks for.
func runSection[A interface {
	analysis.Analyzer
	Result() R
}, R any](cmd *cobra.Command, t *targetFlags, args []string, o *reportFlags, set *analysis.Set, a *analysis.Ref[A], sec report.Section[R]) error {
	r, err := runSet(cmd, t, args, set, setRun{})
	if err != nil {
		return err
	}
	return r.writeAs(cmd, o, sec.Writers(r.report(), a.Get().Result()))
}

// write opens the output (-o, or standard output), lets write fill it,
// closes it and finishes the run (partial notes, the program's exit code).
func (r *analysisRun) write(cmd *cobra.Command, out string, write func(io.Writer) error) error {
	return writeReport(cmd, r.st, r.in, out, write)
}

// writeReport opens the output of st's report (-o, or standard output),
// lets write fill it, closes it and finishes the stream (partial notes,
// the program's exit code); an output that cannot be opened closes the
// stream.
func writeReport(cmd *cobra.Command, st *source.Stream, in report.Input, out string, write func(io.Writer) error) error {
	w, closeOut, err := openOutput(cmd, st, out)
	if err != nil {
		st.Close()
		return err
	}
	return finish(st, in, closeOut(write(w)))
}
