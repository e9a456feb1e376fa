package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clrspy/clrspy/internal/browsertest"
	"github.com/clrspy/clrspy/internal/workload"
)

// TestMemoryLiveHTML: `clrspy memory --duration 4s --interval 500ms
// --format html` on the nativeleak workload leaking 10 MiB a second
// (TestMemoryLiveTimeline's run), drawn in Chromium: the page has the
// memory section alone; its native heap area grows at the workload's rate
// (the slope of the series the chart carries, within the timeline test's
// 10 %: the runtime session's own buffers add ~0.2 MiB/s) while the GC
// heap's stays within 1 MiB; the stacked parts add up to the RSS of the
// section's line; the findings panel has the memory finding with
// `memory --native` as its next command.
func TestMemoryLiveHTML(t *testing.T) {
	p := workload.Start(t, nil, "nativeleak", "managedMB=16", "rateKBps=10240", "seconds=9")
	awaitLine(t, p, "leaking", 1)
	page := filepath.Join(t.TempDir(), "memory.html")
	if _, stderr, err := runCaptured(t, "memory", "--pid", strconv.Itoa(p.Pid), "--duration", "4s", "--interval", "500ms", "--format", "html", "-o", page); err != nil {
		t.Fatalf("clrspy memory --format html: %v\n%s", err, tail(stderr))
	}
	if _, err := p.Wait(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	b := browsertest.OpenPage(t, page)
	if r := b.Requests(); len(r) > 1 {
		t.Errorf("the page made requests besides itself: %v", r)
	}
	if browsertest.MustEval[bool](t, b, `document.getElementById('p-memory').hidden || !document.getElementById('p-timeline').hidden`) {
		t.Fatal("want the memory section shown, the GC timeline hidden")
	}
	series := browsertest.MustEval[map[string][]float64](t, b, `Object.fromEntries([...document.querySelectorAll('#memchart path[data-kind]')].map(p => [p.dataset.kind, p.dataset.mb.split(',').map(Number)]))`)
	times := browsertest.MustEval[[]float64](t, b, `JSON.parse(document.getElementById('clrspy-data').textContent).memory.t_ms`)
	native, gc := series["native_heap"], series["gc_heap"]
	if len(series) != 8 || len(native) < 6 || len(native) != len(times) {
		t.Fatalf("%d series, native heap %d points, %d times: want 8 series of at least 6 points", len(series), len(native), len(times))
	}
	slope := leastSquares(times, native) * 1000 // MiB/s
	t.Logf("native heap %.1f -> %.1f MiB over %d samples, slope %.2f MiB/s; GC heap %.1f -> %.1f MiB", native[0], native[len(native)-1], len(native), slope, gc[0], gc[len(gc)-1])
	if math.Abs(slope-10) > 1 {
		t.Errorf("the chart's native heap grows %.2f MiB/s, the workload leaks 10 MiB/s", slope)
	}
	if d := gc[len(gc)-1] - gc[0]; math.Abs(d) > 1 {
		t.Errorf("the chart's GC heap changes %.2f MiB while only native memory was leaked", d)
	}
	var last float64
	for _, s := range series {
		last += s[len(s)-1]
	}
	rss := browsertest.MustEval[float64](t, b, `(() => { const m = JSON.parse(document.getElementById('clrspy-data').textContent).memory; return m.rss_bytes[m.rss_bytes.length - 1] / 1048576; })()`)
	if math.Abs(last-rss) > 0.01 {
		t.Errorf("the stacked parts end at %.3f MiB, RSS %.3f MiB", last, rss)
	}
	sub := browsertest.MustEval[string](t, b, `document.getElementById('memory-sub').textContent`)
	if !strings.Contains(sub, "native heap grows") || !strings.Contains(sub, "while the GC heap is flat") {
		t.Errorf("section's line %q: want the native heap growing, the GC heap flat", sub)
	}
	findings := browsertest.MustEval[string](t, b, `document.getElementById('findings').textContent`)
	if !strings.Contains(findings, "native heap grows") || !strings.Contains(findings, "clrspy memory --pid "+strconv.Itoa(p.Pid)+" --native --duration 60s") {
		t.Errorf("findings %q: want the native heap's growth and memory --native next", findings)
	}
}

// leastSquares is the slope of y over x.
func leastSquares(x, y []float64) float64 {
	var n, sx, sy, sxx, sxy float64
	for i := range x {
		n++
		sx += x[i]
		sy += y[i]
		sxx += x[i] * x[i]
		sxy += x[i] * y[i]
	}
	return (n*sxy - sx*sy) / (n*sxx - sx*sx)
}

// TestMemoryLiveReportPage: `clrspy report --pid N --duration 5s` on the
// nativeleak workload leaking 10 MiB a second reads the memory split every
// second beside its events (capture.Window), and the page has its memory
// section: the samples on the page's clock (within its first and last
// event, ±1 s: the window's first reading is taken as the session
// opens), the native heap growing at the workload's rate (±15 %: five
// one-second readings, the runtime's own session buffers on top) and
// the GC heap flat within 2 MiB (the page's session allocates a little).
func TestMemoryLiveReportPage(t *testing.T) {
	p := workload.Start(t, nil, "nativeleak", "managedMB=16", "rateKBps=10240", "seconds=12")
	awaitLine(t, p, "leaking", 1)
	page := filepath.Join(t.TempDir(), "report.html")
	if _, stderr, err := runCaptured(t, "report", "--pid", strconv.Itoa(p.Pid), "--duration", "5s", "-o", page); err != nil {
		t.Fatalf("clrspy report: %v\n%s", err, tail(stderr))
	}
	if _, err := p.Wait(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	b := browsertest.OpenPage(t, page)
	got := browsertest.MustEval[struct {
		Hidden   bool
		T0, T1   float64
		Times    []float64
		Native   []float64
		GC       []float64
		Timeline bool
	}](t, b, `(() => {
		const d = JSON.parse(document.getElementById('clrspy-data').textContent);
		const s = (k) => document.querySelector('#memchart path[data-kind="' + k + '"]').dataset.mb.split(',').map(Number);
		return {Hidden: document.getElementById('p-memory').hidden, T0: d.t0_ms, T1: d.t1_ms, Times: d.memory.t_ms,
			Native: s('native_heap'), GC: s('gc_heap'), Timeline: !document.getElementById('p-timeline').hidden};
	})()`)
	if got.Hidden || !got.Timeline {
		t.Fatalf("memory section hidden %v, GC timeline shown %v: want both shown", got.Hidden, got.Timeline)
	}
	n := len(got.Times)
	t.Logf("page %.0f-%.0f ms; %d memory samples %.0f-%.0f ms; native heap %.1f -> %.1f MiB, GC heap %.1f -> %.1f MiB",
		got.T0, got.T1, n, got.Times[0], got.Times[n-1], got.Native[0], got.Native[n-1], got.GC[0], got.GC[n-1])
	if n < 5 || got.Times[0] < got.T0-1000 || got.Times[n-1] > got.T1+1000 {
		t.Errorf("%d samples at %v ms, page %.0f-%.0f ms: want at least 5 within it", n, got.Times, got.T0, got.T1)
	}
	if slope := leastSquares(got.Times, got.Native) * 1000; math.Abs(slope-10) > 1.5 {
		t.Errorf("the native heap grows %.2f MiB/s on the page, the workload leaks 10 MiB/s", slope)
	}
	if d := got.GC[n-1] - got.GC[0]; math.Abs(d) > 2 {
		t.Errorf("the GC heap changes %.2f MiB on the page while only native memory was leaked", d)
	}
}

// TestMemoryLiveNativeHTML: `clrspy memory --native --format html` on the
// nativeleak workload told to leak 16 MiB through Marshal.AllocHGlobal
// while the probes are on: the page's flame graph opens on the
// outstanding bytes, in KiB, and the stacks through LeakHGlobal hold
// 16 MiB of them within 10 % (sample rate 16 KiB: 1024 blocks of 16 KiB,
// each sampled with p = 1 - 1/e, a standard deviation of 2.4 %), as the
// page's search counts them.
func TestMemoryLiveNativeHTML(t *testing.T) {
	p := workload.Start(t, nil, "nativeleak", "managedMB=8")
	p.Stdin("info\n")
	awaitLine(t, p, "done info", 1)
	page := filepath.Join(t.TempDir(), "native.html")
	base := countPerfFDs()
	done := make(chan error, 1)
	go func() {
		_, stderr, err := runCaptured(t, "memory", "--pid", strconv.Itoa(p.Pid), "--native", "--duration", "8s", "--sample-rate", "16384",
			"--runtime=false", "--format", "html", "-o", page)
		if err != nil {
			err = fmt.Errorf("%v\n%s", err, tail(stderr))
		}
		done <- err
	}()
	// The probes are on once every thread's are open: 7 a thread.
	threads, _ := os.ReadDir("/proc/" + strconv.Itoa(p.Pid) + "/task")
	for deadline := time.Now().Add(30 * time.Second); countPerfFDs() < base+7*len(threads); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d perf events open after 30 s, want %d", countPerfFDs()-base, 7*len(threads))
		}
	}
	time.Sleep(500 * time.Millisecond)
	p.Stdin("hglobal 16384\ninfo\n")
	awaitLine(t, p, "done info", 2)
	if err := <-done; err != nil {
		t.Fatalf("clrspy memory --native --format html: %v", err)
	}
	p.Stdin("exit\n")
	b := browsertest.OpenPage(t, page)
	got := browsertest.MustEval[struct {
		Title string
		Total float64
	}](t, b, `({Title: document.getElementById('flame-title').textContent, Total: +document.getElementById('flame').dataset.total})`)
	if got.Title != "Native memory outstanding" {
		t.Fatalf("flame graph %q, want the outstanding bytes", got.Title)
	}
	browsertest.MustEval[bool](t, b, `(window.clrspy.search('LeakHGlobal'), true)`)
	if err := b.WaitFor(`document.getElementById('flame-match').dataset.matchSamples !== undefined`, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	kib := browsertest.MustEval[float64](t, b, `+document.getElementById('flame-match').dataset.matchSamples`)
	t.Logf("outstanding %.0f KiB, %.0f KiB of it through LeakHGlobal (16384 leaked)", got.Total, kib)
	if math.Abs(kib-16384) > 0.10*16384 {
		t.Errorf("LeakHGlobal's stacks hold %.0f KiB on the page, the workload leaked 16384 KiB", kib)
	}
}
