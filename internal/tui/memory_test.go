package tui_test

import (
	"encoding/json"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/clrspy/clrspy/internal/monitor"
	"github.com/clrspy/clrspy/internal/procfs"
	"github.com/clrspy/clrspy/internal/tui"
	"github.com/clrspy/clrspy/memory"
)

// TestMemoryLine: with a split set, the header has one memory line (RSS,
// GC heap, native heap, the rest, the cgroup's usage of its limit) and the
// screen's JSON its figures; without one, no line; no limit, no cgroup
// item.
func TestMemoryLine(t *testing.T) {
	m, _ := replay(t, "gc-wks.nettrace", monitor.Options{}, tui.Options{})
	m.SetSize(160, 48)
	if strings.Contains(ansi.Strip(m.View()), "memory RSS") {
		t.Fatal("a memory line without a split")
	}
	sp := &memory.Split{Rss: 100e6, Parts: []memory.Part{{Kind: memory.GCHeap, Bytes: 40e6}, {Kind: memory.NativeHeap, Bytes: 25e6},
		{Kind: memory.Images, Bytes: 30e6}, {Kind: memory.Stacks, Bytes: 5e6}}}
	m.SetMemory(sp, &procfs.CgroupMemory{Limit: 400e6, Usage: 120e6})
	frame := ansi.Strip(m.View())
	want := "memory RSS 100.0 MB  GC heap 40.0 MB  native 25.0 MB  other 35.0 MB  cgroup 120.0 MB of 400.0 MB (30 %)"
	if !strings.Contains(frame, want) {
		t.Errorf("no %q in\n%s", want, frame)
	}
	b, _ := json.Marshal(m.Screen())
	if !strings.Contains(string(b), `"memory":{"rss_bytes":100000000,"gc_heap_bytes":40000000,"native_heap_bytes":25000000,"other_bytes":35000000,"cgroup_limit_bytes":400000000,"cgroup_usage_bytes":120000000}`) {
		t.Errorf("screen JSON %s", b)
	}
	// Frozen, the line stays as the split changes.
	m.HandleKey(tea.KeyMsg{Type: tea.KeySpace, Runes: []rune{' '}})
	m.SetMemory(&memory.Split{Rss: 200e6}, nil)
	if frame := ansi.Strip(m.View()); !strings.Contains(frame, want) {
		t.Errorf("frozen: no %q in\n%s", want, frame)
	}
	m.HandleKey(tea.KeyMsg{Type: tea.KeySpace, Runes: []rune{' '}})
	m.SetMemory(sp, &procfs.CgroupMemory{Usage: 120e6})
	if frame := ansi.Strip(m.View()); !strings.Contains(frame, "other 35.0 MB") || strings.Contains(frame, "cgroup") {
		t.Errorf("no limit:\n%s", frame)
	}
}
