package report

import (
	"compress/gzip"
	"io"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/nettrace"
)

// requestsPageOf builds the report page of a committed trace (gzipped when its
// name ends in .gz).
func requestsPageOf(t *testing.T, name string) *Page {
	t.Helper()
	open := nettrace.NewReader
	if len(name) > 3 && name[len(name)-3:] == ".gz" {
		open = func(in io.Reader) (*nettrace.Reader, error) {
			z, err := gzip.NewReader(in)
			if err != nil {
				return nil, err
			}
			return nettrace.NewReader(z)
		}
	}
	r := tracetest.OpenFile(t, tracetest.Path(t, name), open)
	a := NewPageAnalyses(r.Header(), PageAnalysesOptions{NoHeap: true})
	as := a.Analyzers()
	if err := tracetest.ReadAll(t, r, func(ev *nettrace.Event) {
		for _, x := range as {
			x.Event(ev)
		}
	}); err != nil {
		t.Fatal(err)
	}
	return NewPage(a.Parts())
}

// TestPageRequests: the report page of the requests fixture (the ASP.NET
// workload under wrk, requests/TestFixture's figures) has the requests
// section: 406 requests over four routes, 20 hit by a GC pause, 109.770
// ms of them paused; 7 of the 11 GCs hit requests, GC 15 the most (5 in
// flight). A trace without request events has no section.
func TestPageRequests(t *testing.T) {
	p := requestsPageOf(t, "requests.nettrace.gz")
	r := p.Requests
	if r == nil {
		t.Fatal("no requests section")
	}
	if r.Requests != 406 || r.HitByPause != 20 || r.Source != "kestrel" || len(r.Routes) != 4 || r.MoreRoutes != 0 ||
		r.PausedMs < 109.76 || r.PausedMs > 109.78 || r.OpenAtEnd != 0 || r.StopsNoStart != 0 {
		t.Errorf("section %+v", r)
	}
	want := map[string]int64{"/backend/{n}": 102, "/call/{n}": 102, "/alloc/{n}": 101, "/lock/{n}": 101}
	var hit int64
	for _, rt := range r.Routes {
		if rt.Method != "GET" || rt.Count != want[rt.Route] {
			t.Errorf("route %s %s: %d requests, want %d", rt.Method, rt.Route, rt.Count, want[rt.Route])
		}
		hit += rt.HitByPause
	}
	if hit != 20 {
		t.Errorf("routes' hits sum to %d, want 20", hit)
	}
	var inFlight int64
	for _, g := range r.Pauses {
		inFlight += g.InFlight
	}
	if r.PausesHit != 7 || len(r.Pauses) != 7 || r.Pauses[0].GC != 15 || r.Pauses[0].InFlight != 5 || inFlight != 21 {
		t.Errorf("%d GCs hit requests (%d listed, %d requests hit in all): %+v", r.PausesHit, len(r.Pauses), inFlight, r.Pauses)
	}
	// The waterfall: the 10 slowest, the slowest a /call/ request of
	// 485.585 ms hit by GCs 10 and 11, its segments the two pauses
	// (10.654 and 2.254 ms) and its outgoing call.
	if len(r.Slowest) != 10 {
		t.Fatalf("%d slowest requests, want 10", len(r.Slowest))
	}
	q := r.Slowest[0]
	var kinds []string
	var paused float64
	for _, sg := range q.Segments {
		kinds = append(kinds, sg.Kind)
		if sg.Kind == "gc_paused" {
			paused += sg.DurationMs
			if sg.StartMs < q.StartMs || sg.StartMs+sg.DurationMs > q.StartMs+q.DurationMs {
				t.Errorf("segment %+v outside its request %.3f..%.3f", sg, q.StartMs, q.StartMs+q.DurationMs)
			}
		}
	}
	if q.Path != "/call/3" || q.DurationMs < 485.58 || q.DurationMs > 485.59 || len(q.GCs) != 2 || q.GCs[0] != 10 || q.GCs[1] != 11 ||
		strings.Join(kinds, ",") != "gc_paused,http_out,gc_paused" || paused < q.GCPausedMs-0.001 || paused > q.GCPausedMs+0.001 {
		t.Errorf("slowest %+v (segments %s, %.3f ms paused)", q, kinds, paused)
	}
	if p := requestsPageOf(t, "gc-wks.nettrace"); p.Requests != nil {
		t.Errorf("gc-wks: section %+v", p.Requests)
	}
}
