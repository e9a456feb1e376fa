package tui_test

import (
	"compress/gzip"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/internal/monitor"
	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/internal/tui"
	"github.com/clrspy/clrspy/nettrace"
)

// TestRequestsPanel: the r panel on the requests fixture (the ASP.NET
// Core workload under wrk: 406 requests over four routes, 20 hit by a GC
// pause) with the routes' counts of clrspy requests; the screen's data
// has them; the panel's hint without --requests.
func TestRequestsPanel(t *testing.T) {
	r := tracetest.OpenFile(t, tracetest.Path(t, "requests.nettrace.gz"), func(in io.Reader) (*nettrace.Reader, error) {
		z, err := gzip.NewReader(in)
		if err != nil {
			return nil, err
		}
		return nettrace.NewReader(z)
	})
	mon := monitor.New(r.Header(), monitor.Options{Requests: true, NoCounters: true})
	if err := tracetest.ReadAll(t, r, mon.Event); err != nil {
		t.Fatal(err)
	}
	mon.Finish()
	m := tui.New(tui.Options{Requests: true})
	m.Update(mon.Snapshot())
	m.SetSize(100, 30)
	keys(m, "r")
	frame := m.View()
	checkFits(t, frame, 100, 30)
	for _, w := range []string{"requests 406", "hit by a GC 20 (4.93%)", "GC paused 4.26% of the request time", "GET /call/{n}", "GET /backend/{n}", "GET /alloc/{n}", "GET /lock/{n}"} {
		if !strings.Contains(frame, w) {
			t.Errorf("frame lacks %q:\n%s", w, frame)
		}
	}
	sc := m.LiveScreen()
	b, _ := json.Marshal(sc)
	var d struct {
		Panel    string `json:"panel"`
		Requests struct {
			Requests int64 `json:"requests_total"`
			Hit      int64 `json:"hit_by_pause"`
			Routes   []struct {
				Route string `json:"route"`
				Count int64  `json:"count"`
			} `json:"routes"`
		} `json:"requests"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"GET /backend/{n}": 102, "GET /call/{n}": 102, "GET /alloc/{n}": 101, "GET /lock/{n}": 101}
	if d.Panel != "requests" || d.Requests.Requests != 406 || d.Requests.Hit != 20 || len(d.Requests.Routes) != 4 {
		t.Errorf("screen %s", b)
	}
	for _, rt := range d.Requests.Routes {
		if want[rt.Route] != rt.Count {
			t.Errorf("route %s: %d, want %d", rt.Route, rt.Count, want[rt.Route])
		}
	}
	off := tui.New(tui.Options{})
	off.Update(mon.Snapshot())
	off.SetSize(80, 24)
	keys(off, "r")
	if f := off.View(); !strings.Contains(f, "start clrspy top with --requests") {
		t.Errorf("off panel:\n%s", f)
	}
}
