package locks

import (
	"testing"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/nettrace"
)

// TestOnWait: every paired wait of the contention fixture is handed on
// once as an analysis.Wait of kind WaitLock: as many as the result's
// contentions, adding up to its total wait, each on a thread with a lock id.
func TestOnWait(t *testing.T) {
	r := tracetest.Open(t, "contention.nettrace", nettrace.NewReader)
	var n, total int64
	a := New(r.Header(), Options{OnWait: func(w *analysis.Wait) {
		n++
		total += w.EndNanos - w.BeginNanos
		if w.Kind != analysis.WaitLock || w.Thread == 0 || w.EndNanos < w.BeginNanos {
			t.Errorf("wait %+v", *w)
		}
	}})
	if err := tracetest.ReadAll(t, r, a.Event); err != nil {
		t.Fatal(err)
	}
	s := a.Result().Summary
	if n == 0 || n != s.Contentions || total != s.TotalNs {
		t.Fatalf("%d waits of %d ns handed on, the result has %d of %d ns", n, total, s.Contentions, s.TotalNs)
	}
}
