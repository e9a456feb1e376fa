package nettrace

import (
	"testing"

	"github.com/clrspy/clrspy/internal/tracetest"
)

// readAll reads the whole trace at path, returning the reader, a summary
// and how the stream ended (nil for a clean end, else the error, e.g. a
// *TruncatedError). Events must come in timestamp order (NetPerf V3 has no
// such order).
func readAll(t testing.TB, path string) (*Reader, *Summary, error) {
	t.Helper()
	r := tracetest.OpenFile(t, path, NewReader)
	sum := NewSummary()
	last := int64(-1 << 63)
	end := tracetest.ReadAll(t, r, func(ev *Event) {
		if ev.Timestamp < last && r.Header().FormatVersion != FormatNetPerfV3 {
			t.Fatalf("%s: event out of timestamp order: %d after %d", path, ev.Timestamp, last)
		}
		last = ev.Timestamp
		sum.Add(ev)
	})
	return r, sum, end
}
