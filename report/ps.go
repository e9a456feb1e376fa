package report

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// PsEntry is one line of `clrspy ps --json`.
type PsEntry struct {
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

// WritePs prints every process in one aligned table (one that cannot be
// attached says so in the RUNTIME column), then why each of those cannot.
func WritePs(out io.Writer, entries []PsEntry) {
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

// WritePsJSON writes the processes as one JSON array.
func WritePsJSON(out io.Writer, entries []PsEntry) error { return writeJSON(out, entries, true) }
