package main

import (
	"bufio"
	"errors"

	"github.com/spf13/cobra"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/source"
)

// eventDump writes each event in the canonical text form of
// nettrace.Dumper, runtime payloads decoded by clrevents.
type eventDump struct {
	w   *bufio.Writer
	d   nettrace.Dumper
	hdr *nettrace.Header
	buf []byte
}

func (e *eventDump) Event(ev *nettrace.Event) {
	e.buf = append(e.d.AppendEvent(e.buf[:0], e.hdr, ev), '\n')
	e.w.Write(e.buf)
}

func (e *eventDump) Stats() analysis.Stats { return analysis.Stats{} }

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
	d := &eventDump{w: bufio.NewWriterSize(w, 64<<10), d: nettrace.Dumper{Describe: clrevents.Describe}, hdr: st.Header()}
	d.w.Write(append(d.d.AppendHeader(nil, d.hdr), '\n'))
	in, err := run(st, stopWatch, d)
	var end error
	if t := st.End().Truncated; t != nil {
		end = t
	}
	d.w.Write(append(d.d.AppendEnd(nil, st.Reader().Stats(), end), '\n'))
	if ferr := d.w.Flush(); err == nil {
		err = ferr
	}
	err = closeOut(err)
	return finish(st, in, err)
}
