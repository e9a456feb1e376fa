package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/report"
)

func init() { commands = append(commands, newStatCmd) }

func newStatCmd() *cobra.Command {
	var asJSON bool
	var out string
	c := &cobra.Command{
		Use:   "stat FILE|-",
		Short: "Describe a trace file: header, event counts, stacks, lost events",
		Long: `stat reads a .nettrace or .netperf file (or standard input with "-") and prints
its header, the number of events per provider, event id and version (with how
many carry a stack), metadata, stack and sequence-point counts, events the
runtime dropped (sequence-number gaps) and whether the file was cut short.

A truncated file is read up to the cut; the counts cover every complete event
and the report says where the cut is (exit status 0: the report is complete
for what exists). Unsupported or corrupt input exits with status 1.`,
		Example: `  clrspy stat app.nettrace
  clrspy stat --json app.nettrace | jq '.events[] | select(.name=="GC/Start")'
  cat app.nettrace | clrspy stat -`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			in, name, closeIn, err := openInput(args[0])
			if err != nil {
				return err
			}
			defer closeIn()
			doc, err := statStream(in, name)
			if err != nil {
				return err
			}
			w, closeOut, err := openOutput(cmd, out)
			if err != nil {
				return err
			}
			if asJSON {
				err = report.WriteStatJSON(w, doc)
			} else {
				err = report.WriteStatText(w, doc)
			}
			err = closeOut(err)
			if doc.Truncated {
				fmt.Fprintf(os.Stderr, "clrspy: warning: %s\n", doc.TruncationReason)
			}
			return err
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print one JSON document")
	c.Flags().StringVarP(&out, "output", "o", "", "write the report to this file instead of stdout")
	return c
}

// statStream reads a whole stream into a stat document.
func statStream(in io.Reader, name string) (*report.StatDocument, error) {
	pin, stop := withProgress(in, name, inputSize(in))
	defer stop()
	r, err := nettrace.NewReader(pin)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	sum := nettrace.NewSummary()
	var first, last int64
	var n uint64
	endErr, err := readAll(r, name, func(ev *nettrace.Event) {
		if n == 0 {
			first = ev.Timestamp
		}
		last = ev.Timestamp
		n++
		sum.Add(ev)
	})
	if err != nil {
		return nil, err
	}
	// The document names the file itself.
	return report.BuildStat(name, r, sum, first, last, errors.Unwrap(endErr)), nil
}

// openInput opens a trace file or standard input ("-").
func openInput(arg string) (io.Reader, string, func(), error) {
	if arg == "-" {
		return os.Stdin, "stdin", func() {}, nil
	}
	f, err := os.Open(arg)
	if err != nil {
		return nil, "", nil, fileError(err)
	}
	if st, err := f.Stat(); err == nil && st.IsDir() {
		f.Close()
		return nil, "", nil, fmt.Errorf("%s is a directory, not a trace file", arg)
	}
	return f, arg, func() { f.Close() }, nil
}

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
		if (out == "" || out == "-") && term.IsTerminal(int(os.Stdout.Fd())) {
			return "", fmt.Errorf("--format pprof writes binary data: give -o FILE or redirect standard output")
		}
	default:
		return "", fmt.Errorf("unknown --format %q: use text, json or pprof", format)
	}
	return format, nil
}
