package monitor

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/stacks"
)

// TestFlamePrune: a call tree over FlameMaxNodes keeps its heaviest nodes
// and never more than the limit; children come heaviest first.
func TestFlamePrune(t *testing.T) {
	w := &cpuWindow{frames: frameTable{idx: map[stacks.Frame]int32{}}}
	// Arena: name, parent, total (parents before children).
	nodes := []struct {
		name   string
		parent int32
		total  int64
	}{{"all", -1, 100}, {"a", 0, 10}, {"a1", 1, 4}, {"a2", 1, 6}, {"b", 0, 90}, {"b1", 4, 50}, {"b11", 5, 50}, {"b2", 4, 1}, {"b3", 4, 39}}
	for _, n := range nodes {
		w.tree = append(w.tree, treeNode{frame: w.frames.id(stacks.Frame{Name: n.name}), parent: n.parent, total: n.total})
	}
	for i, self := range map[int]int64{2: 4, 3: 6, 6: 50, 7: 1, 8: 39} { // the leaves' own samples
		w.tree[i].self = self
	}
	shape := func(root *FlameNode) string {
		var names []string
		var walk func(*FlameNode, string)
		walk = func(n *FlameNode, indent string) {
			names = append(names, indent+n.Name)
			for _, k := range n.Children {
				walk(k, indent+" ")
			}
		}
		walk(root, "")
		return strings.Join(names, "|")
	}
	root := &FlameNode{Name: "all"}
	w.materialise(root, w.cutoff(5))
	// Totals 100, 90, 50, 50, 39 are kept; 10 and below go.
	if got := shape(root); got != "all| b|  b1|   b11|  b3" {
		t.Errorf("pruned tree %q", got)
	}
	// The same kept tree as package stacks' profile (what the live page
	// draws): a sample per kept node with samples of its own, leaf first;
	// the cut subtrees' samples noted.
	p := w.keptProfile(w.cutoff(5))
	var got []string
	for _, s := range p.Samples {
		var names []string
		for _, f := range s.Stack {
			names = append(names, p.Frames[f].Name)
		}
		got = append(got, fmt.Sprintf("%s:%d", strings.Join(names, "<"), s.Count))
	}
	if strings.Join(got, " ") != "b11<b1<b:50 b3<b:39" || p.Total != 89 || len(p.Notes) != 1 || !strings.HasPrefix(p.Notes[0], "11 of the window's 100 samples") {
		t.Errorf("kept profile %q, total %d, notes %q", got, p.Total, p.Notes)
	}
	root = &FlameNode{Name: "all"}
	w.materialise(root, w.cutoff(5000))
	if got := shape(root); got != "all| b|  b1|   b11|  b3|  b2| a|  a2|  a1" {
		t.Errorf("whole tree %q", got)
	}
}

// TestSnapshotJSON: a fresh monitor's snapshot serialises with snake_case
// keys and nulls for what no event said yet.
func TestSnapshotJSON(t *testing.T) {
	m := New(&nettrace.Header{QPCFrequency: 1_000_000_000, PointerSize: 8}, Options{CPU: true})
	b, err := json.Marshal(m.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, want := range []string{`"heap_size_after_bytes":[null,null,null,null,null]`, `"alloc_rate_bytes_per_sec":null`,
		`"state":"running"`, `"longest":null`, `"windows":[{"seconds":1,`, `"concurrent":null`, `"counters":{"metrics":[]`,
		`"top_methods":[]`, `"wait_histogram":{"upper_ns":[10000,20000,50000,`, `"suspensions_by_reason":[]`} {
		if !strings.Contains(s, want) {
			t.Errorf("snapshot JSON lacks %s:\n%s", want, s)
		}
	}
	var back Snapshot
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.GC.HeapSizeAfterBytes[0].Valid() || back.Session.State != StateRunning {
		t.Errorf("round trip: %+v", back.GC.HeapSizeAfterBytes)
	}
}

// TestCPUMappings: a sampled address no method event covers is named from
// the target's mappings once Options.Mappings gives them (module+offset
// for a mapped .dll, [native code] for a native library), also for a stack
// first resolved before the mappings were known.
func TestCPUMappings(t *testing.T) {
	hdr := &nettrace.Header{PointerSize: 8, QPCFrequency: 1e9}
	w := newCPUWindow(hdr, stacks.NewSymbols(hdr), 10)
	dll := "/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.0/System.Private.CoreLib.dll"
	w.sample([]uint64{0x11234, 0x22345}, false, 1e9)
	names := func(n *FlameNode) []string {
		var out []string
		for n != nil {
			out = append(out, n.Name)
			if len(n.Children) == 0 {
				break
			}
			n = n.Children[0]
		}
		return out
	}
	if got := names(w.profile(1e9, 10, 100).Flame); strings.Join(got, "|") != "all|[unknown]|[unknown]" {
		t.Errorf("without mappings: %q", got)
	}
	w.mappings = func() []stacks.Mapping {
		return []stacks.Mapping{{Start: 0x10000, End: 0x20000, Offset: 0x3000, Path: dll}, {Start: 0x20000, End: 0x30000, Path: "/usr/lib/x86_64-linux-gnu/libc.so.6"},
			{Start: 0x40000, End: 0x50000, Path: "/memfd:doublemapper (deleted)"}}
	}
	got := names(w.profile(1e9, 10, 100).Flame)
	if strings.Join(got, "|") != "all|[native code]|System.Private.CoreLib.dll+0x4234" {
		t.Errorf("with mappings: %q", got)
	}
	// JIT-compiled code (the runtime's double mapping) stays unknown, so
	// the stack is named again once its method's event arrives.
	w.sample([]uint64{0x41234}, false, 1e9)
	var all []string
	var walk func(n *FlameNode)
	walk = func(n *FlameNode) {
		all = append(all, n.Name)
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(w.profile(1e9, 10, 100).Flame)
	if got := strings.Join(all, "|"); strings.Count(got, "[unknown]") != 1 || strings.Count(got, "[native code]") != 1 {
		t.Errorf("JIT code in a memfd mapping: flame nodes %q", got)
	}
}
