package main

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

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
	NotAnswering   bool   `json:"not_answering,omitempty"`
}

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
				entries = append(entries, psEntry{p.Pid, p.Name, p.RuntimeVersion, p.Arch, p.CommandLine, p.Attachable, p.Reason, p.Socket, p.NotAnswering})
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
	cmd.Flags().DurationVar(&timeout, "timeout", 2*time.Second, "how long each process's runtime may take to answer")
	return cmd
}

// writePs prints every process in one aligned table (one that cannot be
// attached says so in the RUNTIME column), then why each of those cannot.
func writePs(out io.Writer, entries []psEntry) {
	if len(entries) == 0 {
		fmt.Fprintln(out, "no .NET processes found (none runs, or diagnostics are disabled in all: DOTNET_EnableDiagnostics=0)")
		return
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PID\tNAME\tRUNTIME\tARCH\tCOMMAND LINE")
	for _, e := range entries {
		rt, arch := e.RuntimeVersion, e.Arch
		switch {
		case e.NotAnswering:
			rt, arch = "not answering", "-"
		case !e.Attachable:
			rt, arch = "cannot attach", "-"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", e.Pid, e.Name, rt, arch, e.CommandLine)
	}
	tw.Flush()
	for _, e := range entries {
		if !e.Attachable && !e.NotAnswering {
			fmt.Fprintf(out, "pid %d cannot be attached: %s\n", e.Pid, e.Reason)
		}
	}
}
