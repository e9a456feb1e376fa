package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/clrspy/clrspy/internal/browsertest"
)

// reportTrace is the project's own composite workload recorded by clrspy (GCs
// of every generation and type, CPU samples with Workload.Cpu.HotA and
// HotB, a contended lock, sampled allocations): testdata/traces/README.md.
const reportTrace = "../../testdata/traces/composite.nettrace"

// gcJSONRows are the GCs `clrspy gc --json` reports for a file.
func gcJSONRows(t *testing.T, trace string) []struct {
	Number    uint32  `json:"number"`
	GCStartMS float64 `json:"gc_start_ms"`
} {
	t.Helper()
	out, err := runGCCmd(t, "gc", "--json", "--level", "none", trace)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		GCs []struct {
			Number    uint32  `json:"number"`
			GCStartMS float64 `json:"gc_start_ms"`
		} `json:"gcs"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	return doc.GCs
}

// foldedShare is what `clrspy profile --format folded` says about a
// method: the samples whose stack has a frame containing it
// (case-insensitively, as the page's search matches), and all samples.
func foldedShare(t *testing.T, trace, method string) (match, total int64) {
	t.Helper()
	out, err := runGCCmd(t, "profile", "--format", "folded", "-o", "-", trace)
	if err != nil {
		t.Fatal(err)
	}
	q := strings.ToLower(method)
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		i := strings.LastIndexByte(line, ' ')
		n, err := strconv.ParseInt(line[i+1:], 10, 64)
		if err != nil {
			t.Fatalf("folded line %q: %v", line, err)
		}
		total += n
		for _, f := range strings.Split(line[:i], ";") {
			if strings.Contains(strings.ToLower(f), q) {
				match += n
				break
			}
		}
	}
	return match, total
}

func numbersOf(t *testing.T, b *browsertest.Browser, sel string) []uint32 {
	t.Helper()
	got := browsertest.MustEval[[]uint32](t, b, `[...document.querySelectorAll(`+strconv.Quote(sel)+`)].map(e => +e.getAttribute('data-gc-index'))`)
	slices.Sort(got)
	return got
}

// TestReportPageInBrowser opens the offline page of a real trace in
// headless Chromium and checks it against the other commands on the same
// file: one mark and one table row per GC of `clrspy gc --json`, a range
// dragged on the timeline leaves exactly that range's GCs in the table,
// and a search highlights frames whose samples are `clrspy profile`'s for
// that method. The page must load without console errors and without any
// network request but its own file.
func TestReportPageInBrowser(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	if _, err := runGCCmd(t, "report", reportTrace, "-o", page); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(page)
	if err != nil {
		t.Fatal(err)
	}
	// A few hundred KB for a typical trace (this one: 175 GCs, 1,283
	// samples, 10,205 sampled allocations).
	if st.Size() > 400<<10 {
		t.Errorf("page is %d bytes", st.Size())
	}
	gcs := gcJSONRows(t, reportTrace)
	if len(gcs) != 175 {
		t.Fatalf("clrspy gc --json: %d GCs, the recording has 175", len(gcs))
	}
	var want []uint32
	for _, g := range gcs {
		want = append(want, g.Number)
	}
	slices.Sort(want)

	b := browsertest.New(t, browsertest.Options{Width: 1400, Height: 1000})
	url := "file://" + page
	if err := b.Open(url); err != nil {
		t.Fatal(err)
	}
	// The page draws its panels over a few frames; data-drawn says all are.
	drawn := `document.documentElement.dataset.drawn === '1'`
	if err := b.WaitFor(drawn, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	if got := numbersOf(t, b, "#timeline [data-gc-index]"); !slices.Equal(got, want) {
		t.Errorf("timeline marks: %d, want the %d GCs of clrspy gc --json", len(got), len(want))
	}
	if got := numbersOf(t, b, "#gctable tbody tr[data-gc-index]"); !slices.Equal(got, want) {
		t.Errorf("table rows: %d, want %d", len(got), len(want))
	}
	// Every axis label and legend lies inside its chart (the heap chart's
	// right axis, the allocation rate, was cut at the SVG's edge).
	if clipped := browsertest.ClippedText(t, b); len(clipped) > 0 {
		t.Errorf("labels outside their SVG: %q", clipped)
	}
	if n := browsertest.MustEval[int](t, b, `document.querySelectorAll('#heapchart svg text').length`); n < 8 {
		t.Errorf("heap chart: %d labels, want its axes' and legend's", n)
	}
	frames := browsertest.MustEval[[]int](t, b, `(() => { const f = [...document.querySelectorAll('#flame .fr')]; return [f.length, f.filter(e => e.hasAttribute('data-frame')).length]; })()`)
	if frames[0] < 20 || frames[1] != frames[0]-1 { // every frame but the root "all"
		t.Errorf("flame graph: %d frames, %d with data-frame", frames[0], frames[1])
	}

	// Search through the page's own box, as a person types.
	const method = "Workload.Cpu.HotA"
	wantMatch, wantTotal := foldedShare(t, reportTrace, method)
	if wantMatch == 0 || wantMatch == wantTotal {
		t.Fatalf("folded: %d of %d samples in %s: the trace is not the expected one", wantMatch, wantTotal, method)
	}
	if err := chromedp.Do(b.Ctx, chromedp.SendKeys("#flame-search", method)); err != nil {
		t.Fatal(err)
	}
	// The box searches 120 ms after the last key: wait for the whole name.
	if err := b.WaitFor(drawn+` && document.getElementById('flame-match').getAttribute('data-query') === `+strconv.Quote(method), 10*time.Second); err != nil {
		t.Fatal(err)
	}
	share := browsertest.MustEval[[3]int64](t, b, `(() => { const m = document.getElementById('flame-match');
		const top = [...document.querySelectorAll('#flame .fr.match[data-match-top]')].reduce((s, e) => s + +e.getAttribute('data-value'), 0);
		return [+m.getAttribute('data-match-samples'), +m.getAttribute('data-total-samples'), top]; })()`)
	if share[0] != wantMatch || share[1] != wantTotal {
		t.Errorf("search %q: page %d of %d samples, clrspy profile %d of %d", method, share[0], share[1], wantMatch, wantTotal)
	}
	if share[2] != wantMatch {
		t.Errorf("highlighted frames hold %d samples, clrspy profile %d", share[2], wantMatch)
	}

	// Drag across the middle of the timeline.
	box := browsertest.MustEval[[4]float64](t, b, `(() => { const n = document.getElementById('timeline'); n.scrollIntoView({block: 'center'});
		const r = n.querySelector('svg').getBoundingClientRect();
		return [r.left + +n.dataset.plotLeft, r.left + +n.dataset.plotRight, r.top + 100, 0]; })()`)
	t0, t1 := gcs[0].GCStartMS, gcs[len(gcs)-1].GCStartMS
	axis := browsertest.MustEval[[2]float64](t, b, `[+document.getElementById('timeline').dataset.t0, +document.getElementById('timeline').dataset.t1]`)
	px := func(ms float64) float64 { return box[0] + (ms-axis[0])*(box[1]-box[0])/(axis[1]-axis[0]) }
	from, to := t0+(t1-t0)*0.35, t0+(t1-t0)*0.6
	if err := b.Drag(px(from), px(to), box[2], 12); err != nil {
		t.Fatal(err)
	}
	if err := b.WaitFor(drawn+` && +document.documentElement.dataset.selT1 < `+fmt.Sprint(axis[1]), 10*time.Second); err != nil {
		t.Fatal(err)
	}
	sel := browsertest.MustEval[[2]float64](t, b, `[+document.documentElement.dataset.selT0, +document.documentElement.dataset.selT1]`)
	msPerPx := (axis[1] - axis[0]) / (box[1] - box[0])
	if math.Abs(sel[0]-from) > 1.5*msPerPx || math.Abs(sel[1]-to) > 1.5*msPerPx {
		t.Errorf("dragged %.3f–%.3f ms, the page selected %.3f–%.3f (%.3f ms a pixel)", from, to, sel[0], sel[1], msPerPx)
	}
	var inRange []uint32
	for _, g := range gcs {
		// The page's times are to the µs.
		if s := math.Round(g.GCStartMS*1e3) / 1e3; s >= sel[0] && s <= sel[1] {
			inRange = append(inRange, g.Number)
		}
	}
	slices.Sort(inRange)
	if len(inRange) < 5 || len(inRange) >= len(gcs) {
		t.Fatalf("%d GCs in the dragged range: not a useful check", len(inRange))
	}
	if got := numbersOf(t, b, "#gctable tbody tr[data-gc-index]"); !slices.Equal(got, inRange) {
		t.Errorf("after the drag the table has GCs %v, want %v", got, inRange)
	}
	if got := numbersOf(t, b, "#timeline [data-gc-index]"); !slices.Equal(got, inRange) {
		t.Errorf("after the drag the timeline has GCs %v, want %v", got, inRange)
	}
	// The flame graph follows: fewer samples than the whole trace.
	inSel := browsertest.MustEval[int64](t, b, `+document.getElementById('flame').dataset.total`)
	if inSel <= 0 || inSel >= wantTotal {
		t.Errorf("flame graph of the selection: %d samples (whole trace %d)", inSel, wantTotal)
	}

	if errs := b.Errors(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
	if reqs := b.Requests(); len(reqs) != 1 || reqs[0] != url {
		t.Errorf("network requests: %q, want only the page itself", reqs)
	}

	// A cut trace: the page says so first, above everything.
	cut := filepath.Join(dir, "cut.html")
	if _, err := runGCCmd(t, "report", "../../testdata/traces/gc-wks.truncated.nettrace", "-o", cut); err != nil {
		t.Fatal(err)
	}
	if err := b.Open("file://" + cut); err != nil {
		t.Fatal(err)
	}
	if err := b.WaitFor(drawn, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	banner := browsertest.MustEval[string](t, b, `(() => { const p = document.getElementById('partial'); const r = p.getBoundingClientRect();
		return p.hidden || r.height === 0 || r.top > document.getElementById('summary').getBoundingClientRect().top ? '' : p.textContent; })()`)
	if !strings.Contains(banner, "Partial report: the trace is truncated at offset 25648 (inside EventBlock)") {
		t.Errorf("cut trace: banner %q", banner)
	}
}
