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
// GC heap, native heap, the rest, the cgroup's usage of its limit and its
// headroom) and the screen's JSON its figures; without one, no line; no
// limit, no cgroup item; readings whose native heap grows name it with its
// slope.
func TestMemoryLine(t *testing.T) {
	m, _ := replay(t, "gc-wks.nettrace", monitor.Options{}, tui.Options{})
	m.SetSize(160, 48)
	if strings.Contains(ansi.Strip(m.View()), "memory RSS") {
		t.Fatal("a memory line without a split")
	}
	sp := &memory.Split{Rss: 100e6, Parts: []memory.Part{{Kind: memory.GCHeap, Bytes: 40e6}, {Kind: memory.NativeHeap, Bytes: 25e6},
		{Kind: memory.Images, Bytes: 30e6}, {Kind: memory.Stacks, Bytes: 5e6}}}
	m.SetMemory([]memory.Sample{{Split: *sp}}, &procfs.CgroupMemory{Limit: 400e6, Usage: 120e6})
	frame := ansi.Strip(m.View())
	want := "memory RSS 100.0 MB  GC heap 40.0 MB  native 25.0 MB  other 35.0 MB  cgroup 120.0 MB of 400.0 MB (30 %), headroom 280.0 MB"
	if !strings.Contains(frame, want) {
		t.Errorf("no %q in\n%s", want, frame)
	}
	b, _ := json.Marshal(m.Screen())
	if !strings.Contains(string(b), `"memory":{"rss_bytes":100000000,"gc_heap_bytes":40000000,"native_heap_bytes":25000000,"other_bytes":35000000,"cgroup_limit_bytes":400000000,"cgroup_usage_bytes":120000000,"cgroup_headroom_bytes":280000000}`) {
		t.Errorf("screen JSON %s", b)
	}
	// Frozen, the line stays as the split changes.
	m.HandleKey(tea.KeyMsg{Type: tea.KeySpace, Runes: []rune{' '}})
	m.SetMemory([]memory.Sample{{Split: memory.Split{Rss: 200e6}}}, nil)
	if frame := ansi.Strip(m.View()); !strings.Contains(frame, want) {
		t.Errorf("frozen: no %q in\n%s", want, frame)
	}
	m.HandleKey(tea.KeyMsg{Type: tea.KeySpace, Runes: []rune{' '}})
	m.SetMemory([]memory.Sample{{Split: *sp}}, &procfs.CgroupMemory{Usage: 120e6})
	if frame := ansi.Strip(m.View()); !strings.Contains(frame, "other 35.0 MB") || strings.Contains(frame, "cgroup") || strings.Contains(frame, "grows") {
		t.Errorf("no limit:\n%s", frame)
	}
	// Eleven readings 2 s apart, the native heap 4 MB more at each: it
	// grows 2 MB/s; the GC heap is flat.
	var ss []memory.Sample
	for i := 0; i < 11; i++ {
		n := 25e6 + uint64(i)*4e6
		ss = append(ss, memory.Sample{AtNs: int64(i) * 2e9, Split: memory.Split{Rss: 75e6 + n, Parts: []memory.Part{{Kind: memory.GCHeap, Bytes: 40e6},
			{Kind: memory.NativeHeap, Bytes: n}, {Kind: memory.Images, Bytes: 35e6}}}})
	}
	m.SetMemory(ss, nil)
	frame = ansi.Strip(m.View())
	if want := "memory RSS 140.0 MB  GC heap 40.0 MB  native 65.0 MB  other 35.0 MB  native heap grows 2.0 MB/s"; !strings.Contains(frame, want) {
		t.Errorf("growing: no %q in\n%s", want, frame)
	}
	b, _ = json.Marshal(m.Screen())
	if !strings.Contains(string(b), `"growing_kind":"native_heap","growing_bytes_per_sec":2000000}`) {
		t.Errorf("growing: screen JSON %s", b)
	}
}
