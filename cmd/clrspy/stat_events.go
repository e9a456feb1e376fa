package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/clrspy/clrspy/capture"
	"github.com/clrspy/clrspy/source"
)

// statEvents is `clrspy stat --events`: a header line, every event, and an
// end line that says how the stream ended. A cut trace is not an error (the
// end line and the partial-input warning say so).
func statEvents(cmd *cobra.Command, st *source.Stream, stopWatch func(), out string, asJSON bool) error {
	if asJSON {
		st.Close()
		stopWatch()
		return errors.New("--events and --json contradict each other")
	}
	w, closeOut, err := openOutput(cmd, st, out)
	if err != nil {
		st.Close()
		stopWatch()
		return err
	}
	d := capture.NewEventDump(w, st)
	in, err := run(st, stopWatch, d)
	if ferr := d.Finish(st); err == nil {
		err = ferr
	}
	err = closeOut(err)
	return finish(st, in, err)
}
