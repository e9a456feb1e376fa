package metrics

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/clrspy/clrspy/internal/monitor"
	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/source"
)

// TestRequestSeries: the requests fixture run through a monitor with
// Options.Requests, as serve runs a session, exports clrspy requests'
// figures per route: 102/102/101/101 requests, the duration histogram's
// count and buckets agreeing with them, 20 requests hit by a GC and
// 109.770 ms paused in all (requests/TestFixture's figures). A target
// without request events has none of the families.
func TestRequestSeries(t *testing.T) {
	z, err := os.Open(tracetest.Path(t, "requests.nettrace.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	zr, err := gzip.NewReader(z)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "requests.nettrace")
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, zr); err != nil {
		t.Fatal(err)
	}
	out.Close()
	st, err := source.Open(source.Spec{File: path})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m := monitor.New(st.Header(), monitor.Options{Locks: true, Requests: true})
	if _, err := m.Run(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	plain := fixtureTarget(t, "gc-wks.nettrace", "2", "plain")
	src := &fakeSource{ts: []Target{{Pid: "1", Process: "aspnet", Up: true, Snapshot: m.Snapshot()}, plain}}
	reg, err := newRegistry(src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(scrape(t, Handler(reg), "")))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"/backend/{n}": 102, "/call/{n}": 102, "/alloc/{n}": 101, "/lock/{n}": 101}
	label := func(ls []*dto.LabelPair, name string) string {
		for _, l := range ls {
			if l.GetName() == name {
				return l.GetValue()
			}
		}
		return ""
	}
	var hit, paused float64
	for _, name := range []string{"clrspy_requests_total", "clrspy_request_duration_seconds", "clrspy_request_gc_paused_seconds_total", "clrspy_requests_hit_by_gc_total"} {
		f := fams[name]
		if f == nil || len(f.Metric) != 4 {
			t.Fatalf("%s: %v, want 4 routes of one target", name, f)
		}
		for _, s := range f.Metric {
			route := label(s.Label, "route")
			if label(s.Label, "pid") != "1" || label(s.Label, "method") != "GET" {
				t.Errorf("%s: labels %v", name, s.Label)
			}
			switch name {
			case "clrspy_requests_total":
				if s.Counter.GetValue() != want[route] {
					t.Errorf("%s{route=%q} %v, want %v", name, route, s.Counter.GetValue(), want[route])
				}
			case "clrspy_request_duration_seconds":
				h := s.Histogram
				b := h.Bucket
				if float64(h.GetSampleCount()) != want[route] || len(b) == 0 || float64(b[len(b)-1].GetCumulativeCount()) > want[route] {
					t.Errorf("%s{route=%q}: count %d, want %v", name, route, h.GetSampleCount(), want[route])
				}
			case "clrspy_request_gc_paused_seconds_total":
				paused += s.Counter.GetValue()
			default:
				hit += s.Counter.GetValue()
			}
		}
	}
	if hit != 20 || math.Abs(paused-0.10977) > 1e-5 {
		t.Errorf("%v requests hit, %v s paused: want 20 and 0.10977", hit, paused)
	}
}
