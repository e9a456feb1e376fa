package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/ipc"
	"github.com/clrspy/clrspy/report"
	"github.com/clrspy/clrspy/source"
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

// addReportFlags adds the output flags every analysis command has: --json,
// --format (text, json or pprof) and -o.
func addReportFlags(c *cobra.Command, asJSON *bool, format, out *string) {
	c.Flags().BoolVar(asJSON, "json", false, "print one JSON document (same as --format json)")
	c.Flags().StringVar(format, "format", "text", "output format: text, json or pprof")
	c.Flags().StringVarP(out, "output", "o", "", "write the report to this file instead of stdout")
}

// analysisRun is an analysis command's session once read: the stream (still
// to be finished), what it said of itself, and its span of time.
type analysisRun struct {
	st    *source.Stream
	in    report.Input
	start time.Time     // the first event's wall-clock time
	span  time.Duration // first to last event
}

// runAnalysis opens the target with providers, feeds the analyzers that
// newAnalyzers makes for the stream to the stream's end, and returns the
// run; on an error the stream is closed.
func runAnalysis(cmd *cobra.Command, t *targetFlags, args []string, providers []ipc.Provider, newAnalyzers func(*source.Stream) []analysis.Analyzer) (*analysisRun, error) {
	spec, err := t.spec(cmd, args, providers)
	if err != nil {
		return nil, err
	}
	st, stopWatch, err := openTarget(spec)
	if err != nil {
		return nil, err
	}
	in, err := run(st, stopWatch, newAnalyzers(st)...)
	if err != nil {
		st.Close()
		return nil, err
	}
	end := st.End()
	return &analysisRun{st: st, in: in, start: st.Header().Time(end.FirstTimestamp),
		span: time.Duration(st.Header().DurationNanos(end.LastTimestamp - end.FirstTimestamp))}, nil
}

// write opens the output (-o, or standard output), lets write fill it,
// closes it and finishes the run (partial notes, the program's exit code).
func (r *analysisRun) write(cmd *cobra.Command, out string, write func(io.Writer) error) error {
	w, closeOut, err := openOutput(cmd, r.st, out)
	if err != nil {
		r.st.Close()
		return err
	}
	return finish(r.st, r.in, closeOut(write(w)))
}
