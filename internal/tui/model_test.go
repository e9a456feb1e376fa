package tui_test

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/counters"
	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/internal/monitor"
	"github.com/clrspy/clrspy/internal/tui"
)

var t0 = time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)

// snapshot is a hand-made snapshot: GCs with the given pauses and
// suspend times (ms), one per 100 ms, and one debugger suspension.
func snapshot(pauses, suspends []float64) *monitor.Snapshot {
	s := &monitor.Snapshot{Time: t0.Add(10 * time.Second)}
	s.Session.State = monitor.StateRunning
	s.Session.ElapsedSec = 10
	s.Process = monitor.Process{Pid: 42, Name: "app", RuntimeVersion: "10.0.1", UptimeSec: 10, UptimeFromStart: true}
	for i := range s.GC.HeapSizeAfterBytes {
		s.GC.HeapSizeAfterBytes[i] = gcpause.Opt(1e6 * float64(i+1))
	}
	s.GC.AllocRateBytesPerSec = gcpause.Unknown
	for i, p := range pauses {
		gen := i % 3
		s.GCs = append(s.GCs, gcpause.GCRow{
			Number: uint32(i + 1), Generation: gen, Gen: []string{"0N", "1N", "2N"}[gen], Type: clrevents.GCNonConcurrent,
			Reason: []clrevents.GCReason{clrevents.ReasonAllocSmall, clrevents.ReasonInduced, clrevents.ReasonLowMemory}[gen], Complete: true,
			PauseStartUTC: t0.Add(time.Duration(i) * 100 * time.Millisecond), PauseStartMS: float64(i) * 100,
			SuspendMS: suspends[i], PauseMS: p, PeakMB: 2, AfterMB: 1, PromotedMB: 0.1,
		})
		if s.GC.ByGeneration == nil {
			s.GC.ByGeneration = map[string]gcpause.GenSummary{}
		}
		g := s.GC.Gen(gen)
		g.Count++
		s.GC.GCCount++
		if p > g.MaxPauseMS {
			g.MaxPauseMS = p
		}
		s.GC.ByGeneration[gcpause.GenKeys[gen]] = g
	}
	if n := len(s.GCs); n > 0 {
		last := s.GCs[n-1]
		s.GC.Last = &last
	}
	s.Suspensions = []gcpause.SuspensionRow{{Reason: clrevents.SuspendForDebugger, StartUTC: t0.Add(250 * time.Millisecond), StartMS: 250,
		SuspendMS: 7, PauseMS: 120}}
	s.Windows = []monitor.Window{{Seconds: 1, CoveredSec: 1, GCPausedPercent: 1}, {Seconds: 0, CoveredSec: 10, GCPausedPercent: 2}}
	return s
}

// TestSortFilterKeys: s cycles time → pause → generation → time; / takes
// a generation or a reason; esc clears it.
func TestSortFilterKeys(t *testing.T) {
	m := tui.New(tui.Options{})
	m.SetSize(160, 48)
	m.Update(snapshot([]float64{1, 5, 3, 2, 4, 6}, []float64{0.1, 0.1, 0.1, 0.1, 0.1, 0.1}))
	order := func() string {
		var b strings.Builder
		for _, r := range m.Screen().Rows {
			if r.Kind == "suspension" {
				b.WriteString("S ")
				continue
			}
			b.WriteString(string(rune('0'+r.Number)) + " ")
		}
		return b.String()
	}
	for _, c := range []struct {
		keys []string
		want string
		sort string
	}{
		{nil, "6 5 4 S 3 2 1 ", "time"},
		{[]string{"s"}, "S 6 2 5 3 4 1 ", "pause"},
		{[]string{"s"}, "6 3 5 2 4 1 S ", "generation"},
		{[]string{"s"}, "6 5 4 S 3 2 1 ", "time"},
		{[]string{"/", "g", "e", "n", "1", "enter"}, "5 2 ", "time"},
		{[]string{"/", "backspace", "backspace", "backspace", "backspace", "i", "n", "d", "enter"}, "5 2 ", "time"},
		{[]string{"/", "backspace", "backspace", "backspace", "d", "e", "b", "u", "g", "enter"}, "S ", "time"},
		{[]string{"/", "x", "esc"}, "S ", "time"}, // esc while typing keeps the filter
		{[]string{"esc"}, "6 5 4 S 3 2 1 ", "time"},
		{[]string{"/", "2", "enter", "s"}, "6 3 ", "pause"},
	} {
		keys(m, c.keys...)
		if got := order(); got != c.want || m.Screen().Sort != c.sort {
			t.Errorf("after %q: rows %q sort %s, want %q %s", c.keys, got, m.Screen().Sort, c.want, c.sort)
		}
	}
	// Typing a filter: q is text, not quit.
	keys(m, "/")
	if m.HandleKey(key("q")) || !m.Editing() {
		t.Errorf("q while typing the filter quits")
	}
	keys(m, "esc")
	if !m.HandleKey(key("q")) {
		t.Errorf("q does not quit")
	}
}

// TestFreeze: while frozen, Update goes on (the timeline and the latest
// snapshot move) but the frame and its data stay; unfreezing shows the
// latest; the session's end shows even while frozen.
func TestFreeze(t *testing.T) {
	m := tui.New(tui.Options{})
	m.SetSize(120, 40)
	a := snapshot([]float64{1, 2}, []float64{0.1, 0.1})
	m.Update(a)
	keys(m, " ")
	before := m.View()
	if !m.Frozen() || !strings.Contains(before, "FROZEN") {
		t.Fatalf("space does not freeze:\n%s", before)
	}
	b := snapshot([]float64{1, 2, 3, 4}, []float64{0.1, 0.1, 0.1, 0.1})
	m.Update(b)
	if after := m.View(); after != before {
		t.Errorf("the frozen frame changed:\n%s\n---\n%s", before, after)
	}
	if sc := m.Screen(); sc.GCCounts.Total != 2 || m.LiveScreen().GCCounts.Total != 4 {
		t.Errorf("frozen screen %d GCs, live %d", sc.GCCounts.Total, m.LiveScreen().GCCounts.Total)
	}
	c := snapshot([]float64{1, 2, 3, 4}, []float64{0.1, 0.1, 0.1, 0.1})
	c.Session.State = monitor.StateExited
	code := 3
	c.Session.ExitCode = &code
	m.Update(c)
	if v := m.View(); !strings.Contains(v, "process exited (status 3)") || !strings.Contains(v, "all 2 (last #2)") {
		t.Errorf("frozen frame after the exit:\n%s", v)
	}
	keys(m, " ")
	if v := m.View(); m.Frozen() || strings.Contains(v, "FROZEN") || !strings.Contains(v, "all 4 (last #4)") {
		t.Errorf("unfrozen frame:\n%s", v)
	}
}

// TestSeverityColors: with a color renderer, rows take clrspy gc's
// severity colors (Info yellow from --info, Warn red from --warn) and a
// slow suspension is marked "!" in its own color; a non-GC suspension is
// a row of its own with its reason.
func TestSeverityColors(t *testing.T) {
	r := lipgloss.NewRenderer(nil)
	r.SetColorProfile(termenv.ANSI256)
	m := tui.New(tui.Options{Info: 10 * time.Millisecond, Warn: 100 * time.Millisecond, SlowSuspend: 5 * time.Millisecond, Renderer: r})
	m.SetSize(160, 48)
	m.Update(snapshot([]float64{1, 10, 99.9, 100, 250}, []float64{0.1, 0.1, 6, 0.1, 0.1}))
	sc := m.Screen()
	want := map[uint32][2]string{1: {"debug", ""}, 2: {"info", ""}, 3: {"info", "slow"}, 4: {"warn", ""}, 5: {"warn", ""}}
	lines := strings.Split(m.View(), "\n")
	find := func(prefix string) string {
		for _, l := range lines {
			if strings.HasPrefix(stripANSI(l), prefix) {
				return l
			}
		}
		t.Fatalf("no line %q", prefix)
		return ""
	}
	yellow, red, magenta := "\x1b[93m", "\x1b[1;91m", "\x1b[1;95m"
	for _, row := range sc.Rows {
		if row.Kind == "suspension" {
			if row.Reason != "SuspendForDebugger" || row.Severity != "warn" || !row.SlowSuspend || row.Gen != "S" {
				t.Errorf("suspension row %+v", row)
			}
			l := find("     -  10:00:00.250  S ")
			if !strings.Contains(stripANSI(l), "suspension") || !strings.Contains(l, red) || !strings.Contains(stripANSI(l), "7.000!") {
				t.Errorf("suspension line %q", l)
			}
			continue
		}
		w := want[row.Number]
		if row.Severity != w[0] || row.SlowSuspend != (w[1] == "slow") {
			t.Errorf("GC %d: %s slow=%v, want %v", row.Number, row.Severity, row.SlowSuspend, w)
		}
		l := find("     " + string(rune('0'+row.Number)) + "  ")
		switch w[0] {
		case "warn":
			if !strings.Contains(l, red) {
				t.Errorf("GC %d not red: %q", row.Number, l)
			}
		case "info":
			if !strings.Contains(l, yellow) || strings.Contains(l, red) {
				t.Errorf("GC %d not yellow: %q", row.Number, l)
			}
		default:
			if strings.Contains(l, yellow) || strings.Contains(l, red) {
				t.Errorf("GC %d colored: %q", row.Number, l)
			}
		}
		if slow := strings.Contains(l, magenta) && strings.Contains(stripANSI(l), "!"); slow != (w[1] == "slow") {
			t.Errorf("GC %d slow mark %v: %q", row.Number, slow, l)
		}
	}
}

func stripANSI(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b {
			for i < len(s) && s[i] != 'm' {
				i++
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// fullCounters has a value for every row of the side panel.
func fullCounters() *counters.Result {
	r := &counters.Result{}
	for i, n := range []string{"cpu-usage", "dotnet.process.memory.working_set", "dotnet.gc.last_collection.memory.committed_size",
		"dotnet.gc.pause.time", "dotnet.thread_pool.thread.count", "dotnet.thread_pool.queue.length",
		"dotnet.thread_pool.work_item.count", "dotnet.exceptions", "dotnet.monitor.lock_contentions",
		"dotnet.jit.compiled_methods", "dotnet.jit.compiled_il.size", "dotnet.jit.compilation.time",
		"dotnet.timer.count", "dotnet.assembly.count"} {
		r.Metrics = append(r.Metrics, counters.Metric{Name: n, Kind: counters.KindCounter, Value: float64(i * 1000), Rate: 0.5, HasRate: true})
	}
	return r
}

// TestCounters: the side panel shows the runtime's counters by their
// semantic-convention names, series of one metric added up (exceptions
// by type), rates per second.
func TestCounters(t *testing.T) {
	s := snapshot([]float64{1}, []float64{0.1})
	s.Counters = &counters.Result{Metrics: []counters.Metric{
		{Name: "dotnet.thread_pool.thread.count", Kind: counters.KindUpDownCounter, Value: 12},
		{Name: "dotnet.exceptions", Kind: counters.KindCounter, Value: 3, Rate: 1, HasRate: true,
			Attributes: []counters.Attribute{{Key: counters.AttrErrorType, Value: "A"}}},
		{Name: "dotnet.exceptions", Kind: counters.KindCounter, Value: 4, Rate: 2, HasRate: true,
			Attributes: []counters.Attribute{{Key: counters.AttrErrorType, Value: "B"}}},
		{Name: "dotnet.process.memory.working_set", Kind: counters.KindUpDownCounter, Value: 45.2e6, Unit: "By"},
		{Name: "dotnet.jit.compiled_methods", Kind: counters.KindCounter, Value: 1234},
	}}
	m := tui.New(tui.Options{})
	m.SetSize(160, 48)
	m.Update(s)
	v := m.View()
	for _, want := range []string{"pool threads                    12", "exceptions                 7 (3/s)",
		"working set                45.2 MB", "JIT methods                   1234", "pool queue                       -",
		"% paused (runtime)               -"} {
		if !strings.Contains(v, want) {
			t.Errorf("side panel lacks %q:\n%s", want, v)
		}
	}
	m.SetSize(80, 24)
	if v := m.View(); !strings.Contains(v, "counters  working set 45.2 MB  pool threads 12  exceptions 7 (3/s)") {
		t.Errorf("narrow counters:\n%s", v)
	}
}
