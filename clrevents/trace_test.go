package clrevents

import (
	"errors"
	"testing"

	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/nettrace"
)

// readTrace calls fn with every event of the trace at path (a cut trace up
// to its cut) and returns the reader.
func readTrace(tb testing.TB, path string, fn func(*nettrace.Event)) *nettrace.Reader {
	tb.Helper()
	r := tracetest.OpenFile(tb, path, nettrace.NewReader)
	readAll(tb, r, fn)
	return r
}

// readAll calls fn with every event of r up to its end or cut.
func readAll(tb testing.TB, r *nettrace.Reader, fn func(*nettrace.Event)) {
	tb.Helper()
	if err := tracetest.ReadAll(tb, r, fn); err != nil && !errors.Is(err, nettrace.ErrTruncated) {
		tb.Fatal(err)
	}
}

// firstPayloads returns the first payload of each (runtime event id,
// version) in the trace at path.
func firstPayloads(t testing.TB, path string) (map[[2]uint32][]byte, int) {
	t.Helper()
	out := map[[2]uint32][]byte{}
	r := readTrace(t, path, func(ev *nettrace.Event) {
		if ev.Meta.Runtime != nettrace.Runtime {
			return
		}
		k := [2]uint32{ev.Meta.EventID, ev.Meta.Version}
		if _, ok := out[k]; !ok {
			out[k] = append([]byte(nil), ev.Payload...)
		}
	})
	return out, r.Header().PointerSize
}

// runtimePayloads returns copies of the payloads (and versions) of runtime
// event id in the trace at path, up to limit (0: all).
func runtimePayloads(tb testing.TB, path string, id uint32, limit int) ([][]byte, []uint32) {
	tb.Helper()
	var out [][]byte
	var vers []uint32
	readTrace(tb, path, func(ev *nettrace.Event) {
		if (limit == 0 || len(out) < limit) && ev.Meta.Runtime == nettrace.Runtime && ev.Meta.EventID == id {
			out = append(out, append([]byte(nil), ev.Payload...))
			vers = append(vers, ev.Meta.Version)
		}
	})
	return out, vers
}
