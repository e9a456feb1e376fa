package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

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
