package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/clrspy/clrspy/source"
)

// openOutput returns stdout or the -o file.
func openOutput(cmd *cobra.Command, path string) (io.Writer, func() error, error) {
	if path == "" || path == "-" {
		return cmd.OutOrStdout(), func() error { return nil }, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, nil, source.FileError(err)
	}
	return f, f.Close, nil
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
