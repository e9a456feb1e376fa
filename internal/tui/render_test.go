package tui_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/clrspy/clrspy/internal/monitor"
	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/internal/tui"
	"github.com/clrspy/clrspy/nettrace"
)

// replayPeriod is the refresh period the golden screens replay a trace
// with: the fixtures last about half a second, so a refresh every 50 ms of
// the event clock gives the timeline some samples.
const replayPeriod = 50 * time.Millisecond

// replay feeds a fixture trace to a monitor and the view model, one
// Update per replayPeriod of the event clock and one at the end, as
// clrspy top does once per second live.
func replay(t testing.TB, name string, mopts monitor.Options, cfg tui.Options) (*tui.Model, *monitor.Monitor) {
	t.Helper()
	r := tracetest.Open(t, name, nettrace.NewReader)
	hdr := r.Header()
	mon := monitor.New(hdr, mopts)
	cfg.Refresh = replayPeriod
	m := tui.New(cfg)
	var first, next int64
	seen := false
	err := tracetest.ReadAll(t, r, func(ev *nettrace.Event) {
		ts := hdr.Nanos(ev.Timestamp)
		if !seen {
			first, next, seen = ts, ts+int64(replayPeriod), true
		}
		for ts >= next {
			m.Update(mon.Snapshot())
			next += int64(replayPeriod)
		}
		mon.Event(ev)
	})
	if err != nil {
		t.Fatal(err)
	}
	_ = first
	mon.Finish()
	m.Update(mon.Snapshot())
	return m, mon
}

func key(s string) tea.KeyMsg {
	switch s {
	case " ":
		return tea.KeyMsg{Type: tea.KeySpace, Runes: []rune{' '}}
	case "enter":
		return tea.KeyMsg{Type: tea.KeyEnter}
	case "esc":
		return tea.KeyMsg{Type: tea.KeyEsc}
	case "backspace":
		return tea.KeyMsg{Type: tea.KeyBackspace}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)}
}

func keys(m *tui.Model, ks ...string) {
	for _, k := range ks {
		m.HandleKey(key(k))
	}
}

// checkFits fails when the frame is taller or wider than the terminal.
func checkFits(t *testing.T, frame string, w, h int) {
	t.Helper()
	lines := strings.Split(frame, "\n")
	if len(lines) > h {
		t.Errorf("%dx%d: %d lines", w, h, len(lines))
	}
	for i, l := range lines {
		if n := ansi.StringWidth(l); n > w {
			t.Errorf("%dx%d: line %d is %d cells: %q", w, h, i+1, n, l)
		}
	}
}

// TestGoldenScreens renders fixture traces at fixed sizes: the layout
// changes are reviewed as diffs of testdata/*.txt (go test ./tui -update).
func TestGoldenScreens(t *testing.T) {
	for _, c := range []struct {
		name, trace string
		mopts       monitor.Options
		cfg         tui.Options
		keys        []string
		w, h        int
	}{
		{"gc-wks-160x48", "gc-wks.nettrace", monitor.Options{}, tui.Options{}, nil, 160, 48},
		{"gc-wks-80x24", "gc-wks.nettrace", monitor.Options{}, tui.Options{}, nil, 80, 24},
		{"gc-wks-sort-pause-120x30", "gc-wks.nettrace", monitor.Options{}, tui.Options{Info: 5 * time.Millisecond}, []string{"s"}, 120, 30},
		{"gc-wks-filter-gen2-100x30", "gc-wks.nettrace", monitor.Options{}, tui.Options{}, []string{"/", "g", "e", "n", "2", "enter"}, 100, 30},
		{"gc-wks-frozen-help-100x30", "gc-wks.nettrace", monitor.Options{}, tui.Options{}, []string{" ", "?"}, 100, 30},
		{"gc-wks-typing-filter-80x24", "gc-wks.nettrace", monitor.Options{}, tui.Options{}, []string{"s", "s", "/", "i", "n"}, 80, 24},
		{"gc-server-160x48", "gc-server.nettrace", monitor.Options{}, tui.Options{}, nil, 160, 48},
		{"contention-locks-160x48", "contention.nettrace", monitor.Options{Locks: true}, tui.Options{Locks: true}, []string{"l"}, 160, 48},
		{"contention-locks-80x24", "contention.nettrace", monitor.Options{Locks: true}, tui.Options{Locks: true}, []string{"l"}, 80, 24},
		{"cpu-methods-160x48", "cpu.nettrace", monitor.Options{CPU: true}, tui.Options{CPU: true}, []string{"c"}, 160, 48},
		{"cpu-off-80x24", "gc-wks.nettrace", monitor.Options{}, tui.Options{}, []string{"c"}, 80, 24},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, _ := replay(t, c.trace, c.mopts, c.cfg)
			m.SetSize(c.w, c.h)
			keys(m, c.keys...)
			frame := m.View()
			checkFits(t, frame, c.w, c.h)
			tracetest.Golden(t, c.name+".txt", []byte(frame+"\n"))
		})
	}
}

// TestEverySizeFits: from tui.MinWidth x tui.MinHeight up to 200x60 the
// layout itself fits (no line wider than the terminal, no more lines than
// its height, before View's clipping), on every panel; below, down to
// 10x3, View clips.
func TestEverySizeFits(t *testing.T) {
	m, _ := replay(t, "contention.nettrace", monitor.Options{Locks: true, CPU: true}, tui.Options{Locks: true, CPU: true})
	g, _ := replay(t, "gc-wks.nettrace", monitor.Options{}, tui.Options{})
	for _, panel := range []string{"g", "l", "c", "?"} {
		for _, m := range []*tui.Model{m, g} {
			keys(m, panel)
			for w := 10; w <= 200; w += 7 {
				for h := 3; h <= 60; h += 4 {
					m.SetSize(w, h)
					checkFits(t, m.View(), w, h)
					if w >= tui.MinWidth && h >= tui.MinHeight {
						checkFits(t, strings.Join(m.FrameLines(), "\n"), w, h)
					}
				}
			}
			if panel == "?" {
				keys(m, "?")
			}
		}
	}
}

// TestScreenFigures: the screen's data are the monitor's figures for
// gc-wks (testdata/traces/README.md: 27 gen0, 8 gen1, 5 gen2 GCs, the
// runtime's counts), and its JSON keys are snake_case.
func TestScreenFigures(t *testing.T) {
	m, mon := replay(t, "gc-wks.nettrace", monitor.Options{}, tui.Options{})
	m.SetSize(160, 48)
	sc := m.Screen()
	snap := mon.Snapshot()
	wl := tracetest.GCsByGeneration(tracetest.Workload(t, "gc-wks.nettrace"))
	if got := [3]int{sc.GCCounts.Gen0, sc.GCCounts.Gen1, sc.GCCounts.Gen2}; got != wl || sc.GCCounts.Total != 40 || sc.LastGC != 40 {
		t.Errorf("counts %+v last %d, runtime %v", sc.GCCounts, sc.LastGC, wl)
	}
	if sc.Longest == nil || sc.Longest.Number != snap.GC.Longest.Number || sc.Longest.PauseMS != snap.GC.Longest.PauseMS {
		t.Errorf("longest %+v, monitor %+v", sc.Longest, snap.GC.Longest)
	}
	// The table shows the newest GCs first, as many as fit: 48 lines less
	// the header (4), the histogram (5), the timeline (2), the footer (1)
	// and the table's title and column header (2).
	if len(sc.Rows) != 34 || sc.RowsMatched != 40 || sc.Rows[0].Number != 40 {
		t.Errorf("%d rows of %d, first %+v", len(sc.Rows), sc.RowsMatched, sc.Rows[0])
	}
	for i := 1; i < len(sc.Rows); i++ {
		if sc.Rows[i].StartMS > sc.Rows[i-1].StartMS {
			t.Errorf("row %d starts after row %d", i, i-1)
		}
	}
	frame := m.View()
	for _, want := range []string{
		fmt.Sprintf("gen0 %d  gen1 %d  gen2 %d", wl[0], wl[1], wl[2]),
		fmt.Sprintf("longest %.3f ms (GC %d, %s)", snap.GC.Longest.PauseMS, snap.GC.Longest.Number, snap.GC.Longest.Gen),
		"Workload pid 22587", ".NET 10.0.12", "GC workstation, concurrent", "end of trace",
	} {
		if !strings.Contains(frame, want) {
			t.Errorf("frame lacks %q", want)
		}
	}
	b, err := json.Marshal(sc)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	checkSnake(t, "", doc)
	for _, k := range []string{"gc_counts", "paused", "longest", "rows", "histograms", "timeline", "heap_after_bytes", "counters"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
}

func checkSnake(t *testing.T, path string, v any) {
	t.Helper()
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if k != strings.ToLower(k) || strings.ContainsAny(k, " -") {
				t.Errorf("JSON key %s.%s is not snake_case", path, k)
			}
			checkSnake(t, path+"."+k, e)
		}
	case []any:
		for _, e := range x {
			checkSnake(t, path+"[]", e)
		}
	}
}
