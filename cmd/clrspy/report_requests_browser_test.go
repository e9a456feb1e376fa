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
// requests, GC 15 first with 5), and a page of a trace without request
// events has no section. No script error.
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
