package web

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clrspy/clrspy/internal/browsertest"
	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/internal/workload"
	"github.com/clrspy/clrspy/source"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) Bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return bytes.Clone(l.b.Bytes())
}

// liveRun is a workload launched under a StreamHub, served to a browser.
type liveRun struct {
	b      *browsertest.Browser
	out    *lockedBuffer
	stdin  *io.PipeWriter
	runErr chan error
}

// startLive starts the browser first (it takes seconds on a loaded
// machine), then the workload under a session, then opens the live page
// and waits until it is connected.
func startLive(t *testing.T, env []string, mode string, args ...string) *liveRun {
	t.Helper()
	in, stdin := io.Pipe()
	r := &liveRun{b: browsertest.New(t, browsertest.Options{Width: 1400, Height: 1000}), out: &lockedBuffer{}, stdin: stdin, runErr: make(chan error, 1)}
	for _, e := range env {
		k, v, _ := bytesCut(e)
		t.Setenv(k, v)
	}
	st, err := source.Open(source.Spec{Argv: workload.Argv(t, mode, args...), Providers: PageProviders(false),
		ProgramStdout: r.out, ProgramStderr: io.Discard, ProgramStdin: in})
	if err != nil {
		t.Fatal(err)
	}
	// Cleanups run last first: the workload's stdin closes (a wait=1
	// workload then runs and exits) before Close waits for its exit.
	t.Cleanup(func() { st.Close() })
	t.Cleanup(func() { stdin.Close() })
	hub := NewStreamHub(st, StreamOptions{})
	srv := httptest.NewServer(Handler(hub.Monitors, Options{}))
	t.Cleanup(srv.Close)
	go func() { _, err := hub.Run(); r.runErr <- err }()
	if err := r.b.Open(srv.URL + "/"); err != nil {
		t.Fatal(err)
	}
	if err := r.b.WaitFor(`['on', 'ended'].includes(document.documentElement.dataset.liveState)`, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	return r
}

func bytesCut(kv string) (string, string, bool) {
	for i := 0; i < len(kv); i++ {
		if kv[i] == '=' {
			return kv[:i], kv[i+1:], true
		}
	}
	return kv, "", false
}

// finished waits for the workload's exit line and returns it with the
// time it was seen.
func (r *liveRun) finished(t *testing.T, timeout time.Duration) (*workload.Result, time.Time) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if wl, err := workload.ParseResult(r.out.Bytes()); err == nil {
			return wl, time.Now()
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the workload did not finish in %v: %q", timeout, r.out.Bytes())
	return nil, time.Time{}
}

// TestLivePageReachesCollectionCount: the live page of a running workload
// shows one timeline mark per GC, and reaches the workload's own
// GC.CollectionCount(0) (every GC counts in gen0's count) within 3 s of the
// workload printing it. The 3 s hold under load: updates leave every 250
// ms, the session ends within the runtime's shutdown (well under a second
// on this machine even at a load average of 20), and the page renders the
// last batch on its next frame.
func TestLivePageReachesCollectionCount(t *testing.T) {
	r := startLive(t, nil, "churn", "seconds=3")
	wl, at := r.finished(t, 120*time.Second)
	if wl.Gen0 < 20 {
		t.Fatalf("the workload made %d GCs: not a useful check", wl.Gen0)
	}
	// The page logs when it drew each count of marks (its clock and this
	// test's are the machine's): the first time it showed them all is
	// what counts, not when this poll (slow on a loaded machine) saw it.
	if err := r.b.WaitFor(fmt.Sprintf(`window.clrspy.stats.marks === %d`, wl.Gen0), 30*time.Second); err != nil {
		t.Fatalf("marks: %v; GC.CollectionCount(0) = %d", err, wl.Gen0)
	}
	log := browsertest.MustEval[[][2]float64](t, r.b, `window.clrspy.stats.markLog`)
	var reached time.Time
	for _, e := range log {
		if int(e[1]) == wl.Gen0 {
			reached = time.UnixMilli(int64(e[0]))
			break
		}
	}
	lag := reached.Sub(at)
	t.Logf("%d marks %v after the workload printed its counts", wl.Gen0, lag.Round(time.Millisecond))
	if lag > 3*time.Second {
		t.Errorf("the page showed all %d GCs %v after the workload finished", wl.Gen0, lag.Round(time.Millisecond))
	}
	if err := <-r.runErr; err != nil {
		t.Fatal(err)
	}
	if err := r.b.WaitFor(`document.documentElement.dataset.liveState === 'ended'`, 10*time.Second); err != nil {
		t.Error(err)
	}
	// The live table lists the 100 newest of every GC it has.
	if err := r.b.WaitFor(fmt.Sprintf(`document.querySelectorAll('#gctable tbody tr[data-gc-index]').length === %d && +document.getElementById('gctable').dataset.rows === %d`,
		min(wl.Gen0, 100), wl.Gen0), 3*time.Second); err != nil {
		t.Errorf("table: %v", err)
	}
	// Every axis label and legend lies inside its chart.
	if clipped := browsertest.ClippedText(t, r.b); len(clipped) > 0 {
		t.Errorf("labels outside their SVG: %q", clipped)
	}
	if errs := r.b.Errors(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
}

// frameScript records requestAnimationFrame deltas (ms) in the page, in
// window.__frames[name].
func frameScript(name string) string {
	return `(() => { window.__frames = window.__frames || {}; const f = window.__frames[` + fmt.Sprintf("%q", name) + `] = [];
	window.__stop = false; let last = performance.now();
	const tick = (t) => { if (window.__stop) return; f.push(t - last); last = t; requestAnimationFrame(tick); };
	requestAnimationFrame(tick); return true; })()`
}

func frames(t *testing.T, b *browsertest.Browser, name string) []float64 {
	browsertest.MustEval[bool](t, b, `window.__stop = true`)
	return browsertest.MustEval[[]float64](t, b, `window.__frames[`+fmt.Sprintf("%q", name)+`]`)
}

func percentile(v []float64, p float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return math.NaN()
	}
	return s[min(len(s)-1, int(math.Ceil(p/100*float64(len(s))))-1)]
}

func over(v []float64, ms float64) float64 {
	n := 0
	for _, x := range v {
		if x > ms {
			n++
		}
	}
	return float64(n) / float64(max(len(v), 1))
}

// TestLivePageFrameTime: at well over 100 GCs a second the live page stays
// responsive. Frame deltas are measured in the page with
// requestAnimationFrame, first while the page is connected and idle (the
// workload waits before it starts), then while GCs stream in: the same
// browser on the same loaded machine, a few seconds apart, so the
// difference is the page's own work.
//
// The bounds hold on this 2-core machine shared with several engineers'
// tests (load average near 20, where an idle page itself misses frames):
// while streaming, the median frame is within one 60 Hz frame (16.7 ms) of
// the idle page's, and the share of frames longer than 100 ms grows by at
// most 15 points (measured over repeated runs: 2.7 to 11.5 points; the
// idle page itself has 0 to 3% of them at that load). The page earns it by design: updates arrive every 250
// ms and are applied in one batch per frame; a render pass stops after ~10
// ms of work and leaves the rest to the next frame; the timeline adds the
// new GCs' marks and scrolls instead of redrawing; the table (100 newest
// rows), histogram, heap chart and flame graph redraw at most every
// 0.5–1 s. Before that design the same test saw a median frame of 487 ms
// and frames of 4 s (p95 1.8 s).
func TestLivePageFrameTime(t *testing.T) {
	// Induced GCs 4 ms apart: about 200 a second whatever the machine's
	// load does to allocation speed (churn's rate varies 2x with it).
	r := startLive(t, nil, "induced", "wait=1", "gen0=1200", "gen1=200", "gen2=40", "sleepMs=4")
	browsertest.MustEval[bool](t, r.b, frameScript("idle"))
	time.Sleep(4 * time.Second)
	idle := frames(t, r.b, "idle")
	browsertest.MustEval[bool](t, r.b, frameScript("busy"))
	io.WriteString(r.stdin, "go\n")
	wl, _ := r.finished(t, 120*time.Second)
	busy := frames(t, r.b, "busy")
	stats := browsertest.MustEval[map[string]float64](t, r.b, `({updates: window.clrspy.stats.updates, renders: window.clrspy.stats.renders,
		renderMs: window.clrspy.stats.renderMs, maxRenderMs: window.clrspy.stats.maxRenderMs, applyMs: window.clrspy.stats.applyMs, ...window.clrspy.stats.parts})`)
	<-r.runErr
	rate := float64(wl.Gen0) / (wl.ElapsedMs / 1000)
	if rate < 100 {
		t.Fatalf("the workload made %.0f GCs a second: the check needs at least 100", rate)
	}
	bp50, bp95, bmax, bover := percentile(busy, 50), percentile(busy, 95), slices.Max(busy), over(busy, 100)
	ip50, ip95, iover := percentile(idle, 50), percentile(idle, 95), over(idle, 100)
	msg := fmt.Sprintf("%.0f GCs/s for %.1f s: %d frames while streaming (p50 %.1f ms, p95 %.1f, max %.1f, %.1f%% over 100 ms); "+
		"idle %d frames (p50 %.1f, p95 %.1f, %.1f%% over 100 ms); page: %v",
		rate, wl.ElapsedMs/1000, len(busy), bp50, bp95, bmax, 100*bover, len(idle), ip50, ip95, 100*iover, stats)
	t.Log(msg)
	if len(busy) < 50 || bp50 > ip50+16.7 || bover > iover+0.15 {
		t.Errorf("frames while streaming are slow: %s", msg)
	}
	if errs := r.b.Errors(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
}

// TestLivePageWaiting: before the first GC the live page says what it
// waits for instead of showing empty panels, and its runtime suspension
// panel speaks of the session, not of a trace.
func TestLivePageWaiting(t *testing.T) {
	r := startLive(t, nil, "idle", "wait=1", "seconds=2", "gcEveryMs=100")
	const waiting = `document.getElementById('sel-info').textContent.includes('waiting for the first GC or CPU sample')`
	if err := r.b.WaitFor(waiting, 10*time.Second); err != nil {
		t.Errorf("%v: %q", err, browsertest.MustEval[string](t, r.b, `document.getElementById('sel-info').textContent`))
	}
	if susp := browsertest.MustEval[string](t, r.b, `document.getElementById('p-susp').textContent`); strings.Contains(susp, "trace") {
		t.Errorf("live suspension panel: %q", susp)
	}
	io.WriteString(r.stdin, "go\n")
	if _, err := workload.ParseResult(r.out.Bytes()); err != nil {
		r.finished(t, 60*time.Second)
	}
	if err := r.b.WaitFor(`!document.getElementById('sel-info').textContent.includes('waiting')`, 30*time.Second); err != nil {
		t.Errorf("after the first GCs: %v", err)
	}
	if errs := r.b.Errors(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
}

// gateReader reads r up to each of stops (byte offsets, ascending) in
// turn, waiting at each for a value on open.
type gateReader struct {
	r     io.Reader
	read  int64
	stops []int64
	open  chan struct{}
	quit  chan struct{} // closed: the stream ends at the stop
}

func (g *gateReader) Read(p []byte) (int, error) {
	for len(g.stops) > 0 && g.read >= g.stops[0] {
		select {
		case <-g.open:
		case <-g.quit:
			return 0, io.EOF
		}
		g.stops = g.stops[1:]
	}
	if len(g.stops) > 0 {
		p = p[:min(int64(len(p)), g.stops[0]-g.read)]
	}
	k, err := g.r.Read(p)
	g.read += int64(k)
	return k, err
}

// TestLivePageExceptionsPanel: the live page over the exceptions fixture
// (160 exceptions of 4 types, all in one stretch of the stream about 72 KB
// in), its stream held twice: before the exceptions the live page shows no
// Exceptions panel; held after them, still live, it shows the panel with
// all 160; at the end the panel stays with the workload's most thrown type
// first. Holding the stream makes the test independent of the machine's
// load (the page has as long as it needs at each stop).
func TestLivePageExceptionsPanel(t *testing.T) {
	b := browsertest.New(t, browsertest.Options{Width: 1400, Height: 1000})
	const name = "exceptions.nettrace.gz"
	f, err := os.Open(tracetest.Path(t, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	g := &gateReader{r: z, stops: []int64{48 << 10, 400 << 10}, open: make(chan struct{}), quit: make(chan struct{})} // of 760 KB
	next := func() { g.open <- struct{}{} }
	st, err := source.Open(source.Spec{File: "-", Stdin: g})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	defer close(g.quit) // a failed test's stream ends (before Close)
	hub := NewStreamHub(st, StreamOptions{})
	srv := httptest.NewServer(Handler(hub.Monitors, Options{}))
	defer srv.Close()
	runErr := make(chan error, 1)
	go func() { _, err := hub.Run(); runErr <- err }()
	if err := b.Open(srv.URL + "/"); err != nil {
		t.Fatal(err)
	}
	const live = `document.documentElement.dataset.liveState === 'on'`
	const panel = `(() => { const p = document.getElementById('p-exc'); return p && !p.hidden ? document.getElementById('exc-sub').textContent : ''; })()`
	// Held before the exceptions: live, drawn, no panel.
	if err := b.WaitFor(live+` && document.documentElement.dataset.drawn === '1'`, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	if sub := browsertest.MustEval[string](t, b, panel); sub != "" {
		t.Errorf("before any exception the panel says %q", sub)
	}
	next()
	// Held after them: the update brought the section.
	if err := b.WaitFor(live+` && `+panel+`.startsWith('160 thrown · 160 caught')`, 30*time.Second); err != nil {
		t.Errorf("the live page's Exceptions panel: %v: %q (live state %q)", err, browsertest.MustEval[string](t, b, panel),
			browsertest.MustEval[string](t, b, `document.documentElement.dataset.liveState`))
	}
	next()
	if err := <-runErr; err != nil {
		t.Fatal(err)
	}
	if err := b.WaitFor(`document.documentElement.dataset.liveState === 'ended' && document.documentElement.dataset.drawn === '1' && `+panel+`.startsWith('160 thrown')`, 30*time.Second); err != nil {
		t.Errorf("%v: %q", err, browsertest.MustEval[string](t, b, panel))
	}
	if first := browsertest.MustEval[string](t, b, `document.querySelector('#exc tbody tr td').textContent`); first != "System.InvalidOperationException" {
		t.Errorf("first type %q", first)
	}
	if errs := b.Errors(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
}

// TestLivePageThreadPool: the live page of the starve workload (16 pool
// items blocked 200 ms each in Task.Wait) shows the Thread pool panel with
// the starvation episode while the session is still live (the workload
// keeps probing for 6 s after its burst: time for an update, sent every
// 250 ms, and the panel's redraw, at most every 2 s, on a loaded machine),
// and ends with the pool's peak within 2 threads of the runtime's own
// ThreadPool.ThreadCount (sampled by the workload every 20 ms, so it can
// miss a thread the events count, or see one the last event has not) and
// the blocking site the workload's.
func TestLivePageThreadPool(t *testing.T) {
	r := startLive(t, nil, "starve", "wait=1", "items=16", "blockMs=200", "tailMs=6000")
	io.WriteString(r.stdin, "go\n")
	const live = `document.documentElement.dataset.liveState === 'on'`
	const episodes = `(() => { const p = document.getElementById('p-threadpool'), P = window.clrspy.model.page.thread_pool; return p && !p.hidden && P ? P.episodes.length : 0; })()`
	if err := r.b.WaitFor(live+` && `+episodes+` > 0`, 60*time.Second); err != nil {
		t.Errorf("while live: %v (the panel says %q)", err, browsertest.MustEval[string](t, r.b, `document.getElementById('threadpool-sub').textContent`))
	}
	wl, _ := r.finished(t, 120*time.Second)
	if err := <-r.runErr; err != nil {
		t.Fatal(err)
	}
	if err := r.b.WaitFor(`document.documentElement.dataset.liveState === 'ended' && document.documentElement.dataset.drawn === '1'`, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	type section struct {
		ThreadsMax int `json:"threads_max"`
		Episodes   []struct {
			StartMs float64 `json:"start_ms"`
		} `json:"episodes"`
		Sites []struct {
			Site          string `json:"site"`
			SyncOverAsync bool   `json:"sync_over_async"`
		} `json:"sites"`
	}
	p := browsertest.MustEval[section](t, r.b, `window.clrspy.model.page.thread_pool`)
	peak := int(wl.Int("peakThreads"))
	t.Logf("page: at most %d threads, %d episodes, sites %+v; the runtime: peak %d threads", p.ThreadsMax, len(p.Episodes), p.Sites, peak)
	if peak < 8 || p.ThreadsMax < peak-2 || p.ThreadsMax > peak+2 {
		t.Errorf("page's peak %d threads, the runtime's %d", p.ThreadsMax, peak)
	}
	if len(p.Episodes) == 0 || len(p.Sites) == 0 || p.Sites[0].Site != "Workload.Starve.Block" || !p.Sites[0].SyncOverAsync {
		t.Errorf("page's thread pool: %+v", p)
	}
	if errs := r.b.Errors(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
}
