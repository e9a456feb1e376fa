package capture

import (
	"bufio"
	"io"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/source"
)

// EventDump is `stat --events`: a header line, each event in the
// canonical text form of nettrace.Dumper (runtime payloads decoded by
// clrevents), and an end line that says how the stream ended.
type EventDump struct {
	w   *bufio.Writer
	d   nettrace.Dumper
	hdr *nettrace.Header
	buf []byte
}

// NewEventDump writes st's header line to w; feed st's events to the
// dump, then Finish.
func NewEventDump(w io.Writer, st *source.Stream) *EventDump {
	e := &EventDump{w: bufio.NewWriterSize(w, 64<<10), d: nettrace.Dumper{Describe: clrevents.Describe}, hdr: st.Header()}
	e.w.Write(append(e.d.AppendHeader(nil, e.hdr), '\n'))
	return e
}

// Event writes one event's line.
func (e *EventDump) Event(ev *nettrace.Event) {
	e.buf = append(e.d.AppendEvent(e.buf[:0], e.hdr, ev), '\n')
	e.w.Write(e.buf)
}

// Stats: the dump decodes nothing it could fail on.
func (e *EventDump) Stats() analysis.Stats { return analysis.Stats{} }

// Finish writes the end line once st has ended (a cut trace says where)
// and flushes.
func (e *EventDump) Finish(st *source.Stream) error {
	var end error
	if t := st.End().Truncated; t != nil {
		end = t
	}
	e.w.Write(append(e.d.AppendEnd(nil, st.Reader().Stats(), end), '\n'))
	return e.w.Flush()
}
