// Command screenshots regenerates the pictures of the report page in docs/
// (make screenshots): the offline page of testdata/traces/composite.nettrace,
// the same page with a range selected and a method searched, and the live
// page of the workload's composite mode while it runs. It needs chromium and
// the built workload (make workload).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/internal/browsertest"
	"github.com/clrspy/clrspy/internal/web"
	"github.com/clrspy/clrspy/pageset"
	"github.com/clrspy/clrspy/report"
	"github.com/clrspy/clrspy/source"
)

func main() {
	out := flag.String("o", "docs", "directory to write the PNG files to")
	trace := flag.String("trace", "testdata/traces/composite.nettrace", "trace of the offline page")
	wl := flag.String("workload", "testdata/workloads/bin/net10.0/Workload", "workload executable of the live page")
	flag.Parse()
	if err := run(*out, *trace, *wl); err != nil {
		fmt.Fprintln(os.Stderr, "screenshots:", err)
		os.Exit(1)
	}
}

const drawn = `document.documentElement.dataset.drawn === '1'`

func run(out, trace, wl string) error {
	tmp, err := os.MkdirTemp("", "clrspy-screenshots-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	b, err := browsertest.Start(browsertest.Options{Width: 1400, Height: 1000}, filepath.Join(tmp, "profile"))
	if err != nil {
		return err
	}
	defer b.Close()

	// The offline page, whole trace.
	page := filepath.Join(tmp, "report.html")
	if err := offlinePage(trace, page); err != nil {
		return err
	}
	if err := b.Open("file://" + page); err != nil {
		return err
	}
	if err := b.WaitFor(drawn, 30*time.Second); err != nil {
		return err
	}
	if err := shoot(b, filepath.Join(out, "report.png")); err != nil {
		return err
	}
	// A range selected on the timeline (around the longest gen1 pause) and
	// a method searched in the flame graph.
	if _, err := browsertest.Eval[bool](b, `(() => { const g = window.clrspy.model.g; let best = -1;
		for (let i = 0; i < g.n.length; i++) if (g.gen[i] === 1 && (best < 0 || g.pause[i] > g.pause[best])) best = i;
		window.clrspy.select(g.pstart[best] - 60, g.pstart[best] + g.pause[best] + 60); window.clrspy.search('Workload'); return true; })()`); err != nil {
		return err
	}
	if err := b.WaitFor(drawn+` && document.getElementById('flame-match').dataset.query === 'Workload'`, 30*time.Second); err != nil {
		return err
	}
	if err := shoot(b, filepath.Join(out, "report-selection.png")); err != nil {
		return err
	}
	return livePage(b, wl, filepath.Join(out, "live.png"))
}

func offlinePage(trace, path string) error {
	st, err := source.Open(source.Spec{File: trace})
	if err != nil {
		return err
	}
	defer st.Close()
	an := pageset.New(st.Header(), pageset.Options{})
	end, err := st.Run(an.Analyzers()...)
	if err != nil {
		return err
	}
	pp := an.Parts()
	pp.Title, pp.Start, pp.Pid = filepath.Base(trace), st.Header().SyncTimeUTC, st.Header().ProcessID
	pp.Input = report.NewInput(st.Name, st.Live(), end, stats(an))
	pp.FirstNanos, pp.LastNanos = st.Header().Nanos(end.FirstTimestamp), st.Header().Nanos(end.LastTimestamp)
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := report.WritePage(f, report.NewPage(pp)); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func stats(an *pageset.Analyses) (s analysis.Stats) {
	for _, a := range an.Analyzers() {
		s.Add(a.Stats())
	}
	return s
}

// livePage serves the live view of the composite workload and takes the
// picture a few seconds into its run.
func livePage(b *browsertest.Browser, wl, png string) error {
	st, err := source.Open(source.Spec{Argv: []string{wl, "composite", "seconds=12"}, Providers: web.PageProviders(false),
		ProgramStdout: io.Discard, ProgramStderr: io.Discard})
	if err != nil {
		return err
	}
	defer st.Close()
	hub := web.NewStreamHub(st, web.StreamOptions{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer hub.Serve(ln, web.Options{})()
	done := make(chan error, 1)
	go func() { _, err := hub.Run(); done <- err }()
	if err := b.Open("http://" + ln.Addr().String() + "/"); err != nil {
		return err
	}
	if err := b.WaitFor(`document.documentElement.dataset.liveState === 'on' && +document.documentElement.dataset.gcs > 150 && window.clrspy.model.cpu`, 60*time.Second); err != nil {
		return err
	}
	// A live page is never done drawing: give it a second to catch up.
	time.Sleep(time.Second)
	if err := shoot(b, png); err != nil {
		return err
	}
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

func shoot(b *browsertest.Browser, path string) error {
	png, err := chromedp.Run(b.Ctx, chromedp.FullScreenshot(100))
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "wrote %s (%d KB)\n", path, len(png)>>10)
	return os.WriteFile(path, png, 0o644)
}
