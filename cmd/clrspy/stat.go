package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/report"
	"github.com/clrspy/clrspy/source"
)

func init() { commands = append(commands, newStatCmd) }

func newStatCmd() *cobra.Command {
	var asJSON, events bool
	var out string
	var threads int
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
  clrspy stat --json app.nettrace | jq '.event_counts[] | select(.name=="GC/Start")'
  cat app.nettrace | clrspy stat -`,
		Args: func(cmd *cobra.Command, args []string) error {
			switch len(args) {
			case 0:
				return errors.New("stat needs a trace file (or '-' for standard input): clrspy stat FILE")
			case 1:
				return nil
			}
			return fmt.Errorf("one trace file at a time (got %d arguments)", len(args))
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := readerThreads(threads)
			if err != nil {
				return err
			}
			spec := source.Spec{File: args[0], Stdin: cmd.InOrStdin(), Threads: n}
			if !events {
				// The counts come from the reader (Summarize), which
				// counts every event it decodes: none needs delivering.
				spec.Keep = func(*nettrace.Metadata) bool { return false }
			}
			st, stopWatch, err := openTarget(spec)
			if err != nil {
				return err
			}
			if events {
				return statEvents(cmd, st, stopWatch, out, asJSON)
			}
			in, err := run(st, stopWatch)
			if err != nil {
				st.Close()
				return err
			}
			sum := nettrace.NewSummary()
			st.Reader().Summarize(sum)
			doc := report.BuildStat(in, st.Reader(), sum, st.End())
			return writeReport(cmd, st, in, out, func(w io.Writer) error {
				if asJSON {
					return report.WriteStatJSON(w, doc)
				}
				return report.WriteStatText(w, doc)
			})
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print one JSON document")
	c.Flags().BoolVar(&events, "events", false, "print every event, one line each, in clrspy's canonical text form")
	c.Flags().StringVarP(&out, "output", "o", "", "write the report to this file instead of stdout")
	addThreadsFlag(c, &threads, 0)
	return c
}
