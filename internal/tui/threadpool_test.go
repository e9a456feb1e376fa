package tui_test

import (
	"compress/gzip"
	"io"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/clrspy/clrspy/internal/monitor"
	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/internal/tui"
	"github.com/clrspy/clrspy/nettrace"
)

// TestThreadPoolPanel replays the starve fixture (16 pool items blocked in
// Task.Wait, peak 13 threads) as clrspy top --threadpool shows it: while
// the burst's episode lasts every frame carries the starvation banner, and
// the t panel ends with the pool's figures.
func TestThreadPoolPanel(t *testing.T) {
	r := tracetest.OpenFile(t, tracetest.Path(t, "threadpool.nettrace.gz"), func(in io.Reader) (*nettrace.Reader, error) {
		z, err := gzip.NewReader(in)
		if err != nil {
			return nil, err
		}
		return nettrace.NewReader(z)
	})
	hdr := r.Header()
	mon := monitor.New(hdr, monitor.Options{ThreadPool: true})
	m := tui.New(tui.Options{ThreadPool: true, Refresh: replayPeriod})
	m.SetSize(120, 30)
	var next int64
	banners, starving := 0, 0
	if err := tracetest.ReadAll(t, r, func(ev *nettrace.Event) {
		ts := hdr.Nanos(ev.Timestamp)
		if next == 0 {
			next = ts + int64(replayPeriod)
		}
		for ts >= next {
			s := mon.Snapshot()
			m.Update(s)
			if s.ThreadPool != nil && s.ThreadPool.Starving {
				starving++
				if strings.Contains(ansi.Strip(m.View()), "THREAD POOL STARVING") {
					banners++
				}
			}
			next += int64(replayPeriod)
		}
		mon.Event(ev)
	}); err != nil {
		t.Fatal(err)
	}
	// The episode lasted 638 ms: 12 frames at 50 ms, less its first 100.
	if starving < 8 || banners != starving {
		t.Errorf("%d frames while starving, %d with the banner", starving, banners)
	}
	m.Update(mon.Snapshot())
	keys(m, "t")
	frame := ansi.Strip(m.View())
	for _, want := range []string{"thread pool", "threads 13", "max 13", "episodes 1", "not starving", "cooperative_blocking", "13"} {
		if !strings.Contains(frame, want) {
			t.Errorf("no %q in\n%s", want, frame)
		}
	}
	if strings.Contains(frame, "THREAD POOL STARVING") {
		t.Errorf("banner after the episode:\n%s", frame)
	}
	checkFits(t, m.View(), 120, 30)
}
