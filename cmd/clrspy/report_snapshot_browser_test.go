package main

import (
	"compress/gzip"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/clrspy/clrspy/heapgraph"
	"github.com/clrspy/clrspy/internal/browsertest"
)

// gunzipTrace writes the gunzipped fixture to dir; cut > 0 keeps only its
// first cut bytes.
func gunzipTrace(t *testing.T, name, dir string, cut int64) string {
	t.Helper()
	f, err := os.Open(filepath.Join("../../testdata/traces", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, strings.TrimSuffix(name, ".gz"))
	if cut > 0 {
		out = strings.TrimSuffix(out, ".nettrace") + ".cut.nettrace"
	}
	w, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	var r io.Reader = z
	if cut > 0 {
		r = io.LimitReader(z, cut)
	}
	if _, err := io.Copy(w, r); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestReportSnapshotInBrowser opens the page `clrspy report` writes for a
// heap snapshot clrspy recorded of the graph workload (clrspy record
// --profile gcdump; testdata/traces/README.md) in headless Chromium and
// checks what it shows against heapgraph on the same file: the holder's
// row in the type table has its retained bytes, clicking it shows its
// retention path from the static Holder, the icicle's first box under the
// root is the holder, retaining as much; sorting by objects puts the most
// numerous types first, and a click on a box zooms to it and shows its
// type's paths. A trace cut during the heap walk gives a page whose
// section says the snapshot is incomplete; a .gcdump gives a page of the
// snapshot alone.
func TestReportSnapshotInBrowser(t *testing.T) {
	dir := t.TempDir()
	trace := gunzipTrace(t, "heap-graph.nettrace.gz", dir, 0)
	page := filepath.Join(dir, "snapshot.html")
	if _, err := runGCCmd(t, "report", trace, "-o", page); err != nil {
		t.Fatal(err)
	}
	// heapgraph's figures for the same file.
	_, g, err := readSnapshotFile(trace, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	var holder heapgraph.TypeStat
	for _, ts := range g.Types() {
		if ts.Type == "Workload.GraphHolder" {
			holder = ts
		}
	}
	m, err := g.Matcher("Workload.GraphHolder")
	if err != nil {
		t.Fatal(err)
	}
	why := g.Why(m)
	// The workload's own figure (testdata/traces/heap-graph.workload.json):
	// 144,056 bytes allocated under the holder.
	if holder.Retained != 144056 || len(why) != 1 || why[0].RootKind != heapgraph.RootStatic || !strings.HasSuffix(why[0].Root, "Holder") {
		t.Fatalf("heapgraph: holder %+v, paths %+v", holder, why)
	}
	// A 4,491-object snapshot: the page is the report's (~100 KB) and a
	// few KB more.
	if st, err := os.Stat(page); err != nil || st.Size() > 200<<10 {
		t.Errorf("page: %v, %d bytes", err, st.Size())
	}

	b := browsertest.New(t, browsertest.Options{Width: 1400, Height: 1000})
	url := "file://" + page
	if err := b.Open(url); err != nil {
		t.Fatal(err)
	}
	drawn := `document.documentElement.dataset.drawn === '1'`
	if err := b.WaitFor(drawn, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	if browsertest.MustEval[bool](t, b, `document.getElementById('p-snapshot').hidden`) {
		t.Fatal("no heap snapshot section")
	}
	if !browsertest.MustEval[bool](t, b, `document.getElementById('snap-note').hidden`) {
		t.Error("a complete snapshot's section says it is incomplete")
	}

	// The type table: the holder's row, its retained bytes to the byte.
	row := `document.querySelector('#snaptypes tr[data-type="Workload.GraphHolder"]')`
	got := browsertest.MustEval[[3]string](t, b, `(() => { const r = `+row+`; return r ? [r.dataset.retained, r.cells[3].title, r.cells[3].textContent] : ['', '', '']; })()`)
	if got != [3]string{"144056", "144,056 B", "140.7 KiB"} {
		t.Errorf("holder's row: retained %q, shown %q (%q); heapgraph 144056", got[0], got[2], got[1])
	}
	if n := browsertest.MustEval[int](t, b, `document.querySelectorAll('#snaptypes tbody tr').length`); n != min(len(g.Types()), 100) {
		t.Errorf("%d type rows, heapgraph has %d types", n, len(g.Types()))
	}

	// Click it: its retention path.
	if err := chromedp.Do(b.Ctx, chromedp.Click(chromedp.CSS(`#snaptypes tr[data-type="Workload.GraphHolder"]`))); err != nil {
		t.Fatal(err)
	}
	if err := b.WaitFor(drawn+` && document.getElementById('snappaths').dataset.type === 'Workload.GraphHolder'`, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	paths := browsertest.MustEval[[][5]string](t, b, `[...document.querySelectorAll('#snappaths tbody tr')].map(r => [r.dataset.rootKind, r.dataset.root, r.cells[2].textContent, r.dataset.count, r.dataset.bytes])`)
	want := [5]string{"static", why[0].Root, "Workload.GraphHolder", "1", strconv.FormatUint(holder.Bytes, 10)}
	if len(paths) != 1 || paths[0] != want {
		t.Errorf("holder's paths %q, want %q", paths, want)
	}

	// The icicle: the root, then the holder first (the widest box on its
	// level), retaining as much as the table says.
	top := browsertest.MustEval[[]string](t, b, `(() => { const fs = [...document.querySelectorAll('#snaptree .fr')].filter(e => e.style.top === '18px');
		fs.sort((a, b) => b.getBoundingClientRect().width - a.getBoundingClientRect().width);
		const f = fs[0]; return f ? [f.dataset.type, f.dataset.root || '', f.dataset.retained, f.textContent, String(fs.length)] : []; })()`)
	if len(top) != 5 || top[0] != "Workload.GraphHolder" || top[1] != "static "+why[0].Root || top[2] != "144056" || !strings.HasPrefix(top[3], "Workload.GraphHolder [static ") {
		t.Errorf("icicle's top box %q", top)
	}

	// Sorted by objects, most first.
	if err := chromedp.Do(b.Ctx, chromedp.Click(chromedp.CSS(`#snaptypes th[data-k="count"]`))); err != nil {
		t.Fatal(err)
	}
	if err := b.WaitFor(drawn+` && document.querySelector('#snaptypes th.sorted').dataset.k === 'count'`, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	counts := browsertest.MustEval[[]int](t, b, `[...document.querySelectorAll('#snaptypes tbody tr')].map(r => +r.dataset.count)`)
	for i := 1; i < len(counts); i++ {
		if counts[i] > counts[i-1] {
			t.Fatalf("sorted by objects: %v", counts)
		}
	}
	if len(counts) == 0 || counts[0] != 2000 {
		t.Errorf("sorted by objects, the first row has %v (GraphItem and GraphLeaf: 2,000)", counts)
	}

	// A click on the holder's array zooms to it and shows its paths.
	if err := chromedp.Do(b.Ctx, chromedp.Click(chromedp.CSS(`#snaptree .fr[data-type="Workload.GraphItem[]"]`))); err != nil {
		t.Fatal(err)
	}
	if err := b.WaitFor(drawn+` && document.getElementById('snappaths').dataset.type === 'Workload.GraphItem[]'`, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	crumbs := browsertest.MustEval[string](t, b, `document.getElementById('snap-crumbs').textContent`)
	if crumbs != "all › Workload.GraphHolder › Workload.GraphItem[]" {
		t.Errorf("crumbs after the click: %q", crumbs)
	}
	// Zoomed, the array's 2,000 items are one box as wide as the array
	// less its own bytes.
	items := browsertest.MustEval[[]float64](t, b, `(() => { const a = document.querySelector('#snaptree .fr[data-type="Workload.GraphItem[]"]');
		const i = document.querySelector('#snaptree .fr[data-type="Workload.GraphItem"][data-kind="1"]');
		return i ? [a.getBoundingClientRect().width, i.getBoundingClientRect().width, +i.dataset.retained, +a.dataset.retained] : []; })()`)
	if len(items) != 4 || items[2] != 128000 || items[3] != 144024 || math.Abs(items[1]/items[0]-items[2]/items[3]) > 0.01 {
		t.Errorf("zoomed to the array: widths and retained bytes %v", items)
	}

	if errs := b.Errors(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
	if reqs := b.Requests(); len(reqs) != 1 || reqs[0] != url {
		t.Errorf("network requests: %q, want only the page itself", reqs)
	}

	// Cut during the heap walk (153,432 bytes of the 511,442): the section
	// says the snapshot is incomplete, as the banner does.
	cut := gunzipTrace(t, "heap-graph.nettrace.gz", dir, 153432)
	cutPage := filepath.Join(dir, "cut.html")
	if _, err := runGCCmd(t, "report", cut, "-o", cutPage); err != nil {
		t.Fatal(err)
	}
	if err := b.Open("file://" + cutPage); err != nil {
		t.Fatal(err)
	}
	if err := b.WaitFor(drawn, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	note := browsertest.MustEval[[2]string](t, b, `(() => { const n = document.getElementById('snap-note'); return [n.hidden ? '' : n.textContent, document.getElementById('partial').textContent]; })()`)
	const incomplete = "the heap snapshot is incomplete: the events end during the heap walk"
	if !strings.Contains(note[0], incomplete) || !strings.Contains(note[1], incomplete) {
		t.Errorf("cut trace: section note %q, banner %q", note[0], note[1])
	}

	// A .gcdump: the snapshot alone, no GC panels.
	const gcdump = "../../testdata/traces/heap-graph-dotnet-gcdump.gcdump"
	gdPage := filepath.Join(dir, "gcdump.html")
	if _, err := runGCCmd(t, "report", gcdump, "-o", gdPage); err != nil {
		t.Fatal(err)
	}
	_, gd, err := readGcdump(gcdump)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Open("file://" + gdPage); err != nil {
		t.Fatal(err)
	}
	if err := b.WaitFor(drawn, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	first := gd.Types()[0]
	shown := browsertest.MustEval[[3]string](t, b, `(() => { const r = document.querySelector('#snaptypes tbody tr');
		return [document.getElementById('p-timeline').hidden + ' ' + document.getElementById('p-snapshot').hidden, r.dataset.type, r.dataset.retained]; })()`)
	if shown != [3]string{"true false", first.Type, fmt.Sprint(first.Retained)} {
		t.Errorf(".gcdump page: panels hidden %q, first type %q retaining %s; heapgraph %s %d", shown[0], shown[1], shown[2], first.Type, first.Retained)
	}
	if errs := b.Errors(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
}

// TestReportGcdumpBadInput: a cut .gcdump and a flag that does not apply
// to one are one line each, and no page is written.
func TestReportGcdumpBadInput(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile("../../testdata/traces/heap-graph-dotnet-gcdump.gcdump")
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "cut.gcdump")
	if err := os.WriteFile(cut, data[:len(data)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(dir, "page.html")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"report", cut, "-o", page}, "not a readable .gcdump: truncated"},
		{[]string{"report", "--heap", "../../testdata/traces/heap-graph-dotnet-gcdump.gcdump", "-o", page}, "--heap applies to live sessions"},
	} {
		_, err := runGCCmd(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: %v, want one line with %q", c.args, err, c.want)
		}
	}
	if _, err := os.Stat(page); !os.IsNotExist(err) {
		t.Errorf("a page was written: %v", err)
	}
}
