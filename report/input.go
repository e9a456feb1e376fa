package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode"

	"github.com/clrspy/clrspy/analysis"
)

// Input says what a report was built from and whether that was all of it.
// Every JSON document carries it (its fields inline, snake_case), and every
// text report starts with a "partial report" line when Complete is false,
// so a partial report never looks complete.
type Input struct {
	Source string `json:"source"`
	Live   bool   `json:"live"`
	// Events is the number of events read.
	Events uint64 `json:"events"`
	// EventsLost is the reader's total of events the runtime dropped
	// (the same number `clrspy stat` reports).
	EventsLost uint64 `json:"events_lost"`
	Truncated  bool   `json:"truncated"`
	// TruncatedAt is the byte offset of the cut; null when not truncated.
	TruncatedAt *int64 `json:"truncated_at"`
	// DecodeErrors counts events the analysis skipped because their
	// payload did not decode.
	DecodeErrors uint64 `json:"decode_errors"`
	// Complete is false when any of the above makes the report partial.
	Complete bool `json:"complete"`
	// Partial lists why the report is partial (empty when complete).
	Partial []string `json:"partial,omitempty"`
}

// NewInput describes the stream named name (a live session when live,
// source.Stream's Name and Live) that ended with end, analysed with stats.
func NewInput(name string, live bool, end analysis.End, stats analysis.Stats) Input {
	in := Input{Source: name, Live: live, Events: end.Events, EventsLost: end.EventsLost, DecodeErrors: stats.DecodeErrors}
	if t := end.Truncated; t != nil {
		in.Truncated = true
		off := t.Offset
		in.TruncatedAt = &off
		in.Partial = append(in.Partial, fmt.Sprintf("the trace is truncated at offset %d (inside %s): only the events before the cut are counted", t.Offset, t.What))
	}
	if end.EventsLost > 0 {
		in.Partial = append(in.Partial, fmt.Sprintf("%d events were lost (the runtime dropped them: its buffer was full)", end.EventsLost))
	}
	if stats.DecodeErrors > 0 {
		in.Partial = append(in.Partial, fmt.Sprintf("%d events did not decode and were skipped (first: %v)", stats.DecodeErrors, stats.FirstError))
	}
	in.Complete = len(in.Partial) == 0
	return in
}

// PartialLine is the one line that says why a report is partial, or "".
func (in *Input) PartialLine() string {
	if in.Complete || len(in.Partial) == 0 {
		return ""
	}
	return "PARTIAL REPORT: " + strings.Join(in.Partial, "; ")
}

// SnakeCase turns an identifier such as "NonConcurrent" or "SPBlock" into
// "non_concurrent" or "sp_block": the one key style of every JSON document,
// also for keys that are data (a map keyed by GC type).
func SnakeCase(s string) string {
	var b strings.Builder
	rs := []rune(s)
	for i, r := range rs {
		lower := unicode.ToLower(r)
		if unicode.IsUpper(r) && i > 0 {
			prevLower := unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1])
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if prevLower || (nextLower && unicode.IsUpper(rs[i-1])) {
				b.WriteByte('_')
			}
		}
		if r == ' ' || r == '-' || r == '/' {
			b.WriteByte('_')
			continue
		}
		b.WriteRune(lower)
	}
	return b.String()
}

// writeJSON writes v as one indented JSON document, with HTML's
// characters escaped or not (escapeHTML: encoding/json's default).
func writeJSON(w io.Writer, v any, escapeHTML bool) error {
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	e.SetEscapeHTML(escapeHTML)
	return e.Encode(v)
}
