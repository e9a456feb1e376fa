package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
)

// openOutput returns stdout or the -o file. closeOut(err) completes the
// file when the report was written without error (err == nil) and drops it
// otherwise, returning the first error: a failed report never leaves a
// partial file under the name asked for.
func openOutput(cmd *cobra.Command, path string) (w io.Writer, closeOut func(error) error, err error) {
	if path == "" {
		path = "-"
	}
	f, err := createOutput(path, cmd.OutOrStdout(), 0o644)
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
		if (out == "" || out == "-") && isTerminal(os.Stdout) {
			return "", fmt.Errorf("--format pprof writes binary data: give -o FILE or redirect standard output")
		}
	default:
		return "", fmt.Errorf("unknown --format %q: use text, json or pprof", format)
	}
	return format, nil
}
