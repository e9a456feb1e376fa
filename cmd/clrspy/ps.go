package main

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/clrspy/clrspy/ipc"
)

func init() { commands = append(commands, newPsCmd) }

// psEntry is one line of `clrspy ps --json`.
type psEntry struct {
	Pid            int    `json:"pid"`
	Name           string `json:"name"`
	RuntimeVersion string `json:"runtime_version,omitempty"`
	Arch           string `json:"arch,omitempty"`
	CommandLine    string `json:"command_line"`
	Attachable     bool   `json:"attachable"`
	Reason         string `json:"reason,omitempty"`
	Socket         string `json:"socket,omitempty"`
}

func newPsCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "ps",
		Short: ".NET processes this user can attach to",
		Long: `ps lists every .NET process visible to clrspy: pid, name, runtime version,
architecture and command line. Processes clrspy cannot attach to (another
user's, diagnostics disabled, ...) are listed with the reason.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			procs, err := ipc.Processes()
			if err != nil {
				return err
			}
			entries := make([]psEntry, 0, len(procs))
			for _, p := range procs {
				entries = append(entries, psEntry{p.Pid, p.Name, p.RuntimeVersion, p.Arch, p.CommandLine, p.Attachable, p.Reason, p.Socket})
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(entries)
			}
			writePs(cmd.OutOrStdout(), entries)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// writePs prints the attachable processes as a table, then the others with
// why they cannot be attached.
func writePs(out io.Writer, entries []psEntry) {
	if len(entries) == 0 {
		fmt.Fprintln(out, "no .NET processes found (none runs, or diagnostics are disabled in all: DOTNET_EnableDiagnostics=0)")
		return
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PID\tNAME\tRUNTIME\tARCH\tCOMMAND LINE")
	for _, e := range entries {
		if e.Attachable {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", e.Pid, e.Name, e.RuntimeVersion, e.Arch, e.CommandLine)
		}
	}
	tw.Flush()
	for _, e := range entries {
		if !e.Attachable {
			fmt.Fprintf(out, "%d\t%s\tcannot attach: %s\n", e.Pid, e.Name, e.Reason)
		}
	}
}
