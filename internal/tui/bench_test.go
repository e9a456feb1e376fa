package tui_test

import (
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/clrspy/clrspy/internal/monitor"
	"github.com/clrspy/clrspy/internal/tui"
)

// BenchmarkRender160x48: one frame of clrspy top at 160x48 from the end
// of gc-wks (40 GCs, the table full), in color: building the screen from
// a snapshot and rendering it, what each refresh costs besides the
// snapshot itself (BenchmarkSnapshot).
func BenchmarkRender160x48(b *testing.B) {
	r := lipgloss.NewRenderer(nil)
	r.SetColorProfile(termenv.ANSI256)
	m, _ := replay(b, "gc-wks.nettrace", monitor.Options{}, tui.Options{Renderer: r})
	m.SetSize(160, 48)
	b.ReportAllocs()
	for b.Loop() {
		_ = m.View()
	}
}

// BenchmarkSnapshot: the monitor's Snapshot that each refresh takes, at
// the end of gc-wks.
func BenchmarkSnapshot(b *testing.B) {
	_, mon := replay(b, "gc-wks.nettrace", monitor.Options{}, tui.Options{})
	b.ReportAllocs()
	for b.Loop() {
		_ = mon.Snapshot()
	}
}

// BenchmarkRender160x48Full: the same with the monitor's row limits
// reached (256 GCs and 128 suspensions kept: every refresh sorts them)
// and the counters panel full.
func BenchmarkRender160x48Full(b *testing.B) {
	r := lipgloss.NewRenderer(nil)
	r.SetColorProfile(termenv.ANSI256)
	pauses, suspends := make([]float64, 256), make([]float64, 256)
	for i := range pauses {
		pauses[i], suspends[i] = float64(i%50)*0.7, float64(i%7)
	}
	s := snapshot(pauses, suspends)
	for len(s.Suspensions) < 128 {
		s.Suspensions = append(s.Suspensions, s.Suspensions[0])
	}
	s.Counters = fullCounters()
	m := tui.New(tui.Options{Renderer: r})
	m.SetSize(160, 48)
	for range 60 {
		m.Update(s)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = m.View()
	}
}
