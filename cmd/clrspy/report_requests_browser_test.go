package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clrspy/clrspy/internal/browsertest"
)

// TestReportRequestsInBrowser opens the page `clrspy report` writes for
// the requests fixture in headless Chromium: its requests section shows
// the figures of `clrspy requests` on the same file (406 requests, 20 hit
// by a GC pause; a row per route with its count; the 7 GCs that hit
// requests, GC 15 first with 5), the waterfall of the 10 slowest
// requests with each GC's pause drawn over the requests it froze at the
// timeline's x, and a page of a trace without request events has no
// section. No script error.
func TestReportRequestsInBrowser(t *testing.T) {
	dir := t.TempDir()
	trace := gunzipTrace(t, "requests.nettrace.gz", dir, 0)
	page := filepath.Join(dir, "requests.html")
	if _, err := runGCCmd(t, "report", trace, "-o", page); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "gc.html")
	if _, err := runGCCmd(t, "report", "../../testdata/traces/gc-wks.nettrace", "-o", other); err != nil {
		t.Fatal(err)
	}
	b := browsertest.New(t, browsertest.Options{Width: 1400, Height: 1000})
	drawn := `document.documentElement.dataset.drawn === '1'`
	if err := b.Open("file://" + page); err != nil {
		t.Fatal(err)
	}
	if err := b.WaitFor(drawn, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	if browsertest.MustEval[bool](t, b, `document.getElementById('p-requests').hidden`) {
		t.Fatal("no requests section")
	}
	sub := browsertest.MustEval[string](t, b, `document.getElementById('requests-sub').textContent`)
	if !strings.HasPrefix(sub, "406 requests (kestrel events) · 20 hit by a GC pause (4.9 %)") {
		t.Errorf("section's line %q", sub)
	}
	tables := browsertest.MustEval[[][][]string](t, b, `[...document.querySelectorAll('#requests table')].map(t => [...t.querySelectorAll('tbody tr')].map(r => [...r.cells].map(c => c.textContent)))`)
	if len(tables) != 2 {
		t.Fatalf("%d tables, want the routes' and the GCs'", len(tables))
	}
	want := map[string]string{"GET /backend/{n}": "102", "GET /call/{n}": "102", "GET /alloc/{n}": "101", "GET /lock/{n}": "101"}
	if len(tables[0]) != 4 {
		t.Errorf("route rows %q", tables[0])
	}
	for _, r := range tables[0] {
		if want[r[0]] != r[1] {
			t.Errorf("route row %q: want %s requests", r, want[r[0]])
		}
	}
	if g := tables[1]; len(g) != 7 || g[0][0] != "15" || g[0][3] != "5" {
		t.Errorf("GC rows %q: want 7, GC 15 first with 5 requests hit", g)
	}
	// The waterfall: a bar per slowest request (10); each GC that hit
	// them a band over every request it froze (GC 15: 5 of them; its
	// bands overlap their bars), at the x the timeline gives its pause.
	wf := browsertest.MustEval[map[string]any](t, b, `(() => {
	  const sv = document.querySelector('#requests-wf svg');
	  if (!sv) return {bars: -1};
	  const tl = document.getElementById('timeline').dataset;
	  const t0 = +tl.t0, t1 = +tl.t1, l = +tl.plotLeft, r = +tl.plotRight;
	  const bars = [...sv.querySelectorAll('rect.wf-bar')];
	  const bands = [...sv.querySelectorAll('rect.wf-pause')];
	  const M = window.clrspy.model;
	  let overlap = 0, misaligned = 0, gc15 = 0;
	  for (const band of bands) {
	    const n = band.dataset.gc, row = band.dataset.row;
	    if (n === '15') gc15++;
	    const bar = sv.querySelector('g.wf-req[data-row="' + row + '"] rect.wf-bar');
	    const a = band.getBoundingClientRect(), q = bar.getBoundingClientRect();
	    if (bar.dataset.gcs.split(' ').includes(n) && a.left < q.right && q.left < a.right && a.top < q.bottom && q.top < a.bottom) overlap++;
	    const i = M.byNumber.get(+n);
	    const want = l + (M.g.pstart[i] - t0) * (r - l) / (t1 - t0);
	    if (Math.abs(+band.getAttribute('x') - want) > 0.6) misaligned++;
	  }
	  return {bars: bars.length, slowest: M.page.requests.slowest.length, bands: bands.length, overlap, misaligned, gc15};
	})()`)
	if wf["bars"] != float64(10) || wf["slowest"] != float64(10) || wf["gc15"] != float64(5) || wf["bands"] == float64(0) ||
		wf["overlap"] != wf["bands"] || wf["misaligned"] != float64(0) {
		t.Errorf("waterfall %v: want 10 bars for the 10 slowest, GC 15 over 5 of them, every band over its request's bar and at its timeline x", wf)
	}
	if errs := b.Errors(); len(errs) > 0 {
		t.Errorf("script errors: %q", errs)
	}
	if err := b.Open("file://" + other); err != nil {
		t.Fatal(err)
	}
	if err := b.WaitFor(drawn, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	if !browsertest.MustEval[bool](t, b, `document.getElementById('p-requests').hidden`) {
		t.Error("gc-wks: a requests section")
	}
}
