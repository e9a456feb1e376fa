package monitor

import (
	"compress/gzip"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/nettrace"
)

// TestMonitorExceptions replays the exceptions fixture (the throws
// workload: 80, 40, 20 and 20 exceptions of four types, each from its own
// method) through a monitor with Options.Exceptions and a bound of three
// types and one site: the snapshot names the sites and folds the rest,
// and its JSON is snake_case.
func TestMonitorExceptions(t *testing.T) {
	r := tracetest.OpenFile(t, tracetest.Path(t, "exceptions.nettrace.gz"), func(in io.Reader) (*nettrace.Reader, error) {
		z, err := gzip.NewReader(in)
		if err != nil {
			return nil, err
		}
		return nettrace.NewReader(z)
	})
	m := New(r.Header(), Options{Exceptions: true, NoCounters: true, TopExceptionTypes: 3, TopThrowSites: 1})
	if err := tracetest.ReadAll(t, r, m.Event); err != nil {
		t.Fatal(err)
	}
	e := m.Snapshot().Exceptions
	if e == nil || e.Thrown != 160 || e.Caught != 160 || e.Open != 0 || len(e.Types) != 4 {
		t.Fatalf("%+v", e)
	}
	want := []struct {
		typ, site string
		n         int64
	}{
		{"System.InvalidOperationException", "Workload.ExcOrders.Lookup(", 80},
		{"System.ArgumentException", "Workload.ExcParser.Parse(", 40},
		{"System.Collections.Generic.KeyNotFoundException", "Workload.ExcCache.Get(", 20},
		{"[other types]", "", 20},
	}
	for i, w := range want {
		ty := e.Types[i]
		if ty.Type != w.typ || ty.Count != w.n {
			t.Errorf("type %d: %+v, want %s %d", i, ty, w.typ, w.n)
		}
		if w.site != "" && (len(ty.ThrowSites) != 1 || !strings.HasPrefix(ty.ThrowSites[0].Site, w.site) || ty.ThrowSites[0].Count != w.n) {
			t.Errorf("%s: sites %+v", ty.Type, ty.ThrowSites)
		}
	}
	b, _ := json.Marshal(e)
	if !strings.Contains(string(b), `"throw_sites":[{"site":"Workload.ExcOrders.Lookup(int32)","count":80}]`) {
		t.Errorf("JSON %s", b)
	}
	if p := Providers(&Options{Exceptions: true, NoCounters: true}); len(p) != 1 || p[0].Keywords&0x8000 == 0 {
		t.Errorf("providers %+v", p)
	}
}
