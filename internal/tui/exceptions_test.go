package tui_test

import (
	"compress/gzip"
	"io"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/internal/monitor"
	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/internal/tui"
	"github.com/clrspy/clrspy/nettrace"
)

// TestExceptionsPanel: the x panel on the exceptions fixture (the throws
// workload: 80, 40, 20 and 20 exceptions of four types, each from its own
// method), with the monitor's bound of three types and two sites; and the
// panel's hint when the session has no exceptions.
func TestExceptionsPanel(t *testing.T) {
	r := tracetest.OpenFile(t, tracetest.Path(t, "exceptions.nettrace.gz"), func(in io.Reader) (*nettrace.Reader, error) {
		z, err := gzip.NewReader(in)
		if err != nil {
			return nil, err
		}
		return nettrace.NewReader(z)
	})
	mon := monitor.New(r.Header(), monitor.Options{Exceptions: true, NoCounters: true, TopExceptionTypes: 3, TopThrowSites: 2})
	if err := tracetest.ReadAll(t, r, mon.Event); err != nil {
		t.Fatal(err)
	}
	m := tui.New(tui.Options{Exceptions: true})
	m.Update(mon.Snapshot())
	m.SetSize(100, 30)
	keys(m, "x")
	frame := m.View()
	checkFits(t, frame, 100, 30)
	for _, w := range []string{"thrown 160", "caught 160", "System.InvalidOperationException", "Workload.ExcOrders.Lookup(int32)", "[other types]"} {
		if !strings.Contains(frame, w) {
			t.Errorf("frame lacks %q", w)
		}
	}
	tracetest.Golden(t, "exceptions-100x30.txt", []byte(frame+"\n"))

	off := tui.New(tui.Options{})
	off.Update(mon.Snapshot())
	off.SetSize(80, 24)
	keys(off, "x")
	if f := off.View(); !strings.Contains(f, "start clrspy top with --exceptions") {
		t.Errorf("off panel:\n%s", f)
	}
}
