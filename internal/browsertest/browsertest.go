// Package browsertest is test support: a headless Chromium driven through
// the DevTools protocol (chromedp), that records what a page did besides
// drawing: console errors, uncaught exceptions, browser log errors and
// every network request, so tests can assert that a page is self-contained
// and error-free.
//
// Chromium is the Debian package `chromium` (.ci/run installs it). A test
// that needs the browser fails, not skips, when it is missing. Start serves
// tools outside tests (the screenshots of docs/).
package browsertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Browser is one headless Chromium with one tab.
type Browser struct {
	Ctx    context.Context
	cancel func()

	mu       sync.Mutex
	errors   []string
	requests []string
}

// ExecPath is the Chromium binary: $CHROMIUM, else chromium or
// chromium-browser on PATH.
func ExecPath() (string, error) {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p, nil
	}
	for _, n := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no chromium on PATH: install the Debian package chromium (.ci/run does)")
}

// Options of New.
type Options struct {
	Width, Height int // window size; 0: 1400×1000
}

// New starts a headless Chromium with a fresh profile; it is stopped when
// the test ends.
func New(tb testing.TB, o Options) *Browser {
	tb.Helper()
	b, err := Start(o, tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(b.Close)
	return b
}

// Start starts a headless Chromium with its profile in profileDir (a
// fresh, empty directory); Close stops it.
func Start(o Options, profileDir string) (*Browser, error) {
	path, err := ExecPath()
	if err != nil {
		return nil, err
	}
	if o.Width == 0 {
		o.Width, o.Height = 1400, 1000
	}
	// The flags that work in this environment: no sandbox (root), no GPU,
	// no background traffic of the browser's own (so every request seen is
	// the page's).
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("mute-audio", true),
		chromedp.UserDataDir(profileDir),
		chromedp.WindowSize(o.Width, o.Height),
	}
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	b := &Browser{}
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithListener(b.event))
	b.Ctx = ctx
	b.cancel = func() { cancel(); acancel() }
	// Start the browser now, with no deadline on this first run (its
	// context owns the browser).
	if err := chromedp.Do(ctx); err != nil {
		b.cancel()
		return nil, fmt.Errorf("starting %s: %w", path, err)
	}
	return b, nil
}

// Close stops the browser.
func (b *Browser) Close() { b.cancel() }

func (b *Browser) event(ev any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch e := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeWarning || e.Type == runtime.ConsoleAPICalledTypeAssert {
			var parts []string
			for _, a := range e.Args {
				if a.Value != nil {
					parts = append(parts, string(a.Value))
				} else {
					parts = append(parts, a.Description)
				}
			}
			b.errors = append(b.errors, fmt.Sprintf("console.%s: %s", e.Type, strings.Join(parts, " ")))
		}
	case *runtime.EventExceptionThrown:
		d := e.ExceptionDetails
		msg := d.Text
		if d.Exception != nil {
			msg += " " + d.Exception.Description
		}
		b.errors = append(b.errors, "exception: "+msg)
	case *log.EventEntryAdded:
		if e.Entry.Level == log.EntryLevelError || e.Entry.Level == log.EntryLevelWarning {
			b.errors = append(b.errors, fmt.Sprintf("log %s (%s): %s %s", e.Entry.Level, e.Entry.Source, e.Entry.Text, e.Entry.URL))
		}
	case *network.EventRequestWillBeSent:
		b.requests = append(b.requests, e.Request.URL)
	}
}

// Errors are the console errors and warnings, uncaught exceptions and
// browser log errors so far.
func (b *Browser) Errors() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.errors...)
}

// Requests are the URLs of every network request so far (the page's own
// document included).
func (b *Browser) Requests() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.requests...)
}

// Open navigates to url and waits for the load event.
func (b *Browser) Open(url string) error {
	ctx, cancel := context.WithTimeout(b.Ctx, 60*time.Second)
	defer cancel()
	return chromedp.Do(ctx, chromedp.Navigate(url))
}

// OpenPage starts a browser (New), opens the report page file path and
// waits until it is drawn (the page's data-drawn: every panel, nothing
// queued), failing the test if it is not within 30 s or the page had an
// error.
func OpenPage(tb testing.TB, path string) *Browser {
	tb.Helper()
	b := New(tb, Options{Width: 1400, Height: 1000})
	if err := b.Open("file://" + path); err != nil {
		tb.Fatal(err)
	}
	if err := b.WaitFor(`document.documentElement.dataset.drawn === '1'`, 30*time.Second); err != nil {
		tb.Fatal(err)
	}
	if e := b.Errors(); len(e) > 0 {
		tb.Fatalf("page errors: %v", e)
	}
	return b
}

// Eval evaluates a JavaScript expression and decodes its value.
func Eval[T any](b *Browser, expr string) (T, error) {
	ctx, cancel := context.WithTimeout(b.Ctx, 60*time.Second)
	defer cancel()
	return chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
}

// MustEval is Eval that fails the test on an error.
func MustEval[T any](tb testing.TB, b *Browser, expr string) T {
	tb.Helper()
	v, err := Eval[T](b, expr)
	if err != nil {
		tb.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// WaitFor polls a JavaScript condition until it is true or timeout passes.
func (b *Browser) WaitFor(cond string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		ok, err := Eval[bool](b, "!!("+cond+")")
		if err == nil && ok {
			return nil
		}
		if time.Now().After(deadline) {
			if err != nil {
				return fmt.Errorf("waiting for %s: %w", cond, err)
			}
			return fmt.Errorf("waiting for %s: still false after %v", cond, timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Drag presses the left mouse button at (x0, y) and releases it at (x1,
// y), moving through steps points: real input events, as a person's drag.
func (b *Browser) Drag(x0, x1, y float64, steps int) error {
	ctx, cancel := context.WithTimeout(b.Ctx, 30*time.Second)
	defer cancel()
	acts := []chromedp.Action[chromedp.Void]{
		chromedp.MouseEvent("mouseMoved", x0, y),
		chromedp.MouseEvent("mousePressed", x0, y, chromedp.ButtonLeft, chromedp.ClickCount(1)),
	}
	for i := 1; i <= steps; i++ {
		x := x0 + (x1-x0)*float64(i)/float64(steps)
		acts = append(acts, chromedp.MouseEvent("mouseMoved", x, y, chromedp.ButtonLeft, held))
	}
	acts = append(acts, chromedp.MouseEvent("mouseReleased", x1, y, chromedp.ButtonLeft, chromedp.ClickCount(1)))
	return chromedp.Do(ctx, acts...)
}

// held marks a mouse move with the left button down.
func held(p *input.DispatchMouseEventParams) { p.Buttons = 1 }

// Screenshot captures the whole page as PNG.
func (b *Browser) Screenshot() ([]byte, error) {
	ctx, cancel := context.WithTimeout(b.Ctx, 60*time.Second)
	defer cancel()
	return chromedp.Run(ctx, chromedp.FullScreenshot(100))
}

// clippedTextJS lists every SVG text drawn (partly) outside its SVG, the
// way a reader would see it cut: "id: text (left–right of 0–width)".
const clippedTextJS = `(() => { const out = [];
	for (const svg of document.querySelectorAll('svg')) {
		const s = svg.getBoundingClientRect();
		if (!s.width) continue;
		const owner = svg.closest('[id]');
		for (const t of svg.querySelectorAll('text')) {
			const r = t.getBoundingClientRect();
			if (!r.width || !t.textContent) continue;
			if (r.left < s.left - 0.5 || r.right > s.right + 0.5 || r.top < s.top - 0.5 || r.bottom > s.bottom + 0.5)
				out.push((owner ? owner.id : 'svg') + ': ' + JSON.stringify(t.textContent) + ' at ' + (r.left - s.left).toFixed(1) + '–' + (r.right - s.left).toFixed(1) + ' of 0–' + s.width.toFixed(1));
		}
	}
	return out; })()`

// ClippedText lists the page's SVG texts (axis labels, legends) that do
// not lie inside their SVG: a label cut at the SVG's edge.
func ClippedText(tb testing.TB, b *Browser) []string {
	tb.Helper()
	return MustEval[[]string](tb, b, clippedTextJS)
}
