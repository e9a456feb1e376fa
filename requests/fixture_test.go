package requests_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/locks"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/report"
	"github.com/clrspy/clrspy/requests"
)

// analyzeFixture runs requests.nettrace.gz (an attach session around a
// 1 s wrk run against testdata/workloads/AspNet: every request of the
// run is in it) through gcpause, locks and requests wired as clrspy
// requests wires them, and returns the result and every request.
func analyzeFixture(t *testing.T) (*requests.Result, map[string]requests.Request) {
	t.Helper()
	r := tracetest.Open(t, "requests.nettrace.gz", func(f io.Reader) (*nettrace.Reader, error) {
		z, err := gzip.NewReader(f)
		if err != nil {
			return nil, err
		}
		return nettrace.NewReader(z)
	})
	all := map[string]requests.Request{}
	ra := requests.New(r.Header(), requests.Options{Slowest: 5, OnRequest: func(q *requests.Request) {
		c := *q
		c.GCs = append([]uint32(nil), q.GCs...)
		all[q.ID] = c
	}})
	ga := gcpause.New(r.Header(), gcpause.Options{OnStopped: ra.Stopped})
	la := locks.New(r.Header(), locks.Options{OnWait: ra.Wait, NoSamples: true})
	if err := tracetest.ReadAll(t, r, func(ev *nettrace.Event) { ga.Event(ev); la.Event(ev); ra.Event(ev) }); err != nil {
		t.Fatal(err)
	}
	ra.Finish()
	if st := ra.Stats(); st.DecodeErrors != 0 || st.Events == 0 {
		t.Fatalf("stats %+v", st)
	}
	return ra.Result(), all
}

// TestFixture: the requests of the fixture are exactly the ones the
// workload's middleware served (ids, paths, per-route counts); every
// request the workload saw paused (its own GC.GetTotalPauseDuration delta)
// clrspy saw paused at least as long, less 10 % and 200 µs per GC (the
// runtime's clock read before SuspendEEBegin; see TestRequestsLive); each
// /call/ request made one outgoing call, timed within the workload's own
// stopwatch; and the text report is the golden one.
func TestFixture(t *testing.T) {
	res, all := analyzeFixture(t)
	w := tracetest.Workload(t, "requests.nettrace")
	var rows [][]any
	if err := w.Get("requests", &rows); err != nil {
		t.Fatal(err)
	}
	if res.Requests != int64(len(rows)) || len(all) != len(rows) || res.Requests != 406 {
		t.Fatalf("%d requests (%d ids), the workload served %d", res.Requests, len(all), len(rows))
	}
	if res.OpenAtEnd != 0 || res.StopsWithoutStart != 0 || res.Dropped != 0 || !res.ActivityFlow || res.Source != "kestrel" {
		t.Errorf("open %d, stops without start %d, dropped %d, flow %v, source %q", res.OpenAtEnd, res.StopsWithoutStart, res.Dropped, res.ActivityFlow, res.Source)
	}
	hitOwn := 0
	for _, row := range rows {
		id, path, pause, httpMs := row[0].(string), row[1].(string), row[4].(float64), row[6].(float64)
		q, ok := all[id]
		if !ok || q.Path != path {
			t.Errorf("request %s %s: clrspy has %+v", id, path, q)
			continue
		}
		got := float64(q.GCPausedNanos) / 1e6
		if pause > 0 {
			hitOwn++
			if got < 0.9*pause-0.2*float64(max(len(q.GCs), 1)) {
				t.Errorf("request %s: %.3f ms paused, the workload's own %.3f ms", id, got, pause)
			}
		}
		if strings.HasPrefix(path, "/call/") {
			if out := float64(q.HTTPOutNanos) / 1e6; q.HTTPOutCount != 1 || out > httpMs+0.05 || out < 0.5*httpMs {
				t.Errorf("request %s: %d calls of %.3f ms, the workload's %.3f ms", id, q.HTTPOutCount, out, httpMs)
			}
		}
	}
	if hitOwn == 0 || res.HitByGC < int64(hitOwn) {
		t.Errorf("the workload saw %d requests paused, clrspy %d", hitOwn, res.HitByGC)
	}
	var in float64
	for _, g := range res.GCs {
		in += float64(g.InFlight)
	}
	var text bytes.Buffer
	if err := report.WriteRequestsText(&text, report.Input{Source: "requests.nettrace.gz", Complete: true}, res); err != nil {
		t.Fatal(err)
	}
	tracetest.Golden(t, "requests.txt", text.Bytes())
}
