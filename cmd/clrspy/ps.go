package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/clrspy/clrspy/ipc"
	"github.com/clrspy/clrspy/report"
)

func init() { commands = append(commands, newPsCmd) }

// psEntry is one line of `clrspy ps --json` (report.PsEntry).
type psEntry = report.PsEntry

func newPsCmd() *cobra.Command {
	var asJSON bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "ps",
		Short: ".NET processes this user can attach to",
		Long: `ps lists every .NET process visible to clrspy: pid, name, runtime version,
architecture and command line. Processes clrspy cannot attach to (another
user's, diagnostics disabled, ...) are listed with the reason. Every process
is asked at once, each for at most --timeout: a runtime that does not answer
in time (busy, stopped, hung) is listed as "not answering".`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if timeout <= 0 {
				return fmt.Errorf("--timeout %v: must be positive", timeout)
			}
			procs, err := ipc.ProcessesWithin(timeout)
			if err != nil {
				return err
			}
			entries := make([]psEntry, 0, len(procs))
			for _, p := range procs {
				entries = append(entries, psEntry{Pid: p.Pid, Name: p.Name, RuntimeVersion: p.RuntimeVersion, Arch: p.Arch, CommandLine: p.CommandLine,
					Attachable: p.Attachable, Reason: p.Reason, Socket: p.Socket, NotAnswering: p.NotAnswering})
			}
			if asJSON {
				return report.WritePsJSON(cmd.OutOrStdout(), entries)
			}
			writePs(cmd.OutOrStdout(), entries)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().DurationVar(&timeout, "timeout", 2*time.Second, "how long each process's runtime may take to answer")
	return cmd
}

// writePs writes ps's table (report.WritePs).
func writePs(out io.Writer, entries []psEntry) { report.WritePs(out, entries) }
