package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/nettrace"
)

// statEvents is `clrspy stat --events`: every event in the canonical text
// form of nettrace.Dumper, runtime payloads decoded by clrevents.
func statEvents(cmd *cobra.Command, in io.Reader, name, out string, asJSON bool) error {
	if asJSON {
		return errors.New("--events and --json contradict each other")
	}
	r, err := nettrace.NewReader(in)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	w, closeOut, err := openOutput(cmd, out)
	if err != nil {
		return err
	}
	end := nettrace.Dumper{Describe: clrevents.Describe}.Dump(w, r)
	if cerr := closeOut(); cerr != nil {
		return cerr
	}
	if errors.Is(end, nettrace.ErrTruncated) {
		// As for the summary: a cut trace is reported, not an error.
		fmt.Fprintf(os.Stderr, "clrspy: warning: %s: %v\n", name, end)
		return nil
	}
	if end != nil {
		return fmt.Errorf("%s: %w", name, end)
	}
	return nil
}
