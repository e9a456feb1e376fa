package nettrace

import (
	"bufio"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
)

// DefaultDumpHex is how many payload bytes a dump shows in hex when the
// payload cannot be decoded into fields.
const DefaultDumpHex = 32

// Dumper writes a stream in clrspy's canonical text form, for people and
// for golden files: a header line, then one line per event, then an end
// line; the event lines depend only on the events, so two containers of the
// same events (a V4 trace and its V6 copy) dump the same:
//
//	# nettrace V4 pointer=8 pid=4242 processors=2 sync=2026-11-23T14:03:13.062Z clock=1000000000Hz
//	<ns since sync> tid=<thread> <provider>/<name> v<version> [stack=<frames>] [lost=<n>] [activity=<guid>] [related=<guid>] <payload>
//	# end: <events> events, <lost> lost; <how it ended>
//
// The payload is name=value per field for self-describing events (strings
// quoted), Describe's text where it knows the event, else
// payload=<size>B and the first HexBytes bytes in hex.
type Dumper struct {
	// HexBytes bounds the hex shown per payload (0: DefaultDumpHex;
	// negative: all of it).
	HexBytes int
	// Describe, if set, renders payloads that declare no fields (the
	// runtime's own events; see clrevents.Describe). ok false falls back to
	// hex.
	Describe func(ev *Event, pointerSize int) (text string, ok bool)
}

// Dump writes every event of r in the canonical text form with the default
// Dumper. It returns nil at a clean end and the error that ended the stream
// otherwise (a *TruncatedError for a cut trace), after writing everything
// up to it and the end line; or the first write error.
func Dump(w io.Writer, r *Reader) error { return Dumper{}.Dump(w, r) }

// Dump writes every event of r; see the package function Dump.
func (d Dumper) Dump(w io.Writer, r *Reader) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	hdr := r.Header()
	bw.Write(d.AppendHeader(nil, hdr))
	bw.WriteByte('\n')
	var line []byte
	var end error
	for {
		ev, err := r.Next()
		if err != nil {
			if err != io.EOF {
				end = err
			}
			break
		}
		line = d.AppendEvent(line[:0], hdr, ev)
		line = append(line, '\n')
		if _, err := bw.Write(line); err != nil {
			return err
		}
	}
	bw.Write(d.AppendEnd(line[:0], r.Stats(), end))
	bw.WriteByte('\n')
	if err := bw.Flush(); err != nil {
		return err
	}
	return end
}

// AppendEnd appends the dump's end line (without a newline): the reader's
// event and lost-event totals and how the stream ended (end: nil for a
// clean end, else the error that ended it).
func (d Dumper) AppendEnd(b []byte, st *Stats, end error) []byte {
	b = fmt.Appendf(b, "# end: %d events, %d lost; ", st.Events, st.LostEvents)
	var te *TruncatedError
	switch {
	case end == nil:
		return append(b, "complete"...)
	case errors.As(end, &te):
		b = fmt.Appendf(b, "truncated at offset %d (inside %s)", te.Offset, te.What)
		if st.CutEvent != "" {
			b = fmt.Appendf(b, "; cut in half: %s", st.CutEvent)
		}
		return b
	}
	return fmt.Appendf(b, "error: %v", end)
}

// AppendHeader appends the dump's header line (without a newline).
func (d Dumper) AppendHeader(b []byte, h *Header) []byte {
	container := "nettrace"
	if h.FormatVersion == FormatNetPerfV3 {
		container = "netperf"
	}
	return fmt.Appendf(b, "# %s V%d pointer=%d pid=%d processors=%d sync=%s clock=%dHz", container, h.FormatVersion,
		h.PointerSize, h.ProcessID, h.NumberOfProcessors, h.SyncTimeUTC.UTC().Format(time.RFC3339Nano), h.QPCFrequency)
}

// AppendEvent appends the dump line of ev (without a newline).
func (d Dumper) AppendEvent(b []byte, h *Header, ev *Event) []byte {
	m := ev.Meta
	b = strconv.AppendInt(b, h.Nanos(ev.Timestamp), 10)
	b = append(b, " tid="...)
	b = strconv.AppendUint(b, ev.ThreadID, 10)
	b = append(b, ' ')
	b = append(b, m.Provider...)
	b = append(b, '/')
	name := m.Name
	if name == "" {
		name = displayName(m)
	}
	b = append(b, name...)
	b = append(b, " v"...)
	b = strconv.AppendUint(b, uint64(m.Version), 10)
	if len(ev.Stack) > 0 {
		b = append(b, " stack="...)
		b = strconv.AppendInt(b, int64(len(ev.Stack)), 10)
	}
	if ev.LostBefore > 0 {
		b = append(b, " lost="...)
		b = strconv.AppendUint(b, uint64(ev.LostBefore), 10)
	}
	if !ev.ActivityID.IsZero() {
		b = append(b, " activity="...)
		b = append(b, ev.ActivityID.String()...)
	}
	if !ev.RelatedActivityID.IsZero() {
		b = append(b, " related="...)
		b = append(b, ev.RelatedActivityID.String()...)
	}
	// Runtime events declare an empty field list over a non-empty payload:
	// only a list that covers something describes the payload.
	if m.HasFields && (len(m.Fields) > 0 || len(ev.Payload) == 0) {
		vals, err := DecodePayload(m, ev.Payload, h.PointerSize)
		if err == nil {
			for _, v := range vals {
				b = append(b, ' ')
				b = appendValue(b, v)
			}
			return b
		}
		b = append(b, " undecoded="...)
		b = strconv.AppendQuote(b, err.Error())
	} else if d.Describe != nil {
		if s, ok := d.Describe(ev, h.PointerSize); ok {
			if s != "" {
				b = append(b, ' ')
				b = append(b, s...)
			}
			return b
		}
	}
	return d.appendHex(b, ev.Payload)
}

func (d Dumper) appendHex(b []byte, p []byte) []byte {
	b = append(b, " payload="...)
	b = strconv.AppendInt(b, int64(len(p)), 10)
	b = append(b, 'B')
	if len(p) == 0 {
		return b
	}
	n := d.HexBytes
	if n == 0 {
		n = DefaultDumpHex
	}
	if n < 0 || n > len(p) {
		n = len(p)
	}
	b = append(b, ' ')
	b = hex.AppendEncode(b, p[:n])
	if n < len(p) {
		b = append(b, "..."...)
	}
	return b
}

// appendValue writes one decoded field as name=value.
func appendValue(b []byte, v Value) []byte {
	b = append(b, v.Name...)
	b = append(b, '=')
	return appendAny(b, v.V)
}

func appendAny(b []byte, v any) []byte {
	switch x := v.(type) {
	case string:
		return strconv.AppendQuote(b, x)
	case bool:
		return strconv.AppendBool(b, x)
	case float32:
		return strconv.AppendFloat(b, float64(x), 'g', -1, 32)
	case float64:
		return strconv.AppendFloat(b, x, 'g', -1, 64)
	case []byte:
		return hex.AppendEncode(b, x)
	case time.Time:
		return x.UTC().AppendFormat(b, time.RFC3339Nano)
	case GUID:
		return append(b, x.String()...)
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ' ')
			}
			b = appendAny(b, e)
		}
		return append(b, ']')
	case []Value:
		b = append(b, '{')
		for i, e := range x {
			if i > 0 {
				b = append(b, ' ')
			}
			b = appendValue(b, e)
		}
		return append(b, '}')
	default:
		return fmt.Append(b, x)
	}
}
