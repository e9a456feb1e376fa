package monitor

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/nettrace"
)

// TestFlamePrune: a tree over FlameMaxNodes keeps its heaviest nodes and
// never more than the limit; children come heaviest first.
func TestFlamePrune(t *testing.T) {
	node := func(name string, total int64, kids ...*FlameNode) *FlameNode {
		return &FlameNode{Name: name, Total: total, Children: kids}
	}
	root := node("all", 100,
		node("a", 10, node("a1", 4), node("a2", 6)),
		node("b", 90, node("b1", 50, node("b11", 50)), node("b2", 1), node("b3", 39)))
	count := func(n *FlameNode) int {
		c := 0
		var walk func(*FlameNode)
		walk = func(n *FlameNode) {
			c++
			for _, k := range n.Children {
				walk(k)
			}
		}
		walk(n)
		return c
	}
	if n := count(root); n != 9 {
		t.Fatalf("%d nodes", n)
	}
	root.sortAndPrune(cutoff(root, 9, 5))
	var names []string
	var walk func(*FlameNode, string)
	walk = func(n *FlameNode, indent string) {
		names = append(names, indent+n.Name)
		for _, k := range n.Children {
			walk(k, indent+" ")
		}
	}
	walk(root, "")
	// Totals 100, 90, 50, 50, 39 are kept; 10 and below go.
	if got := strings.Join(names, "|"); got != "all| b|  b1|   b11|  b3" {
		t.Errorf("pruned tree %q", got)
	}
	root = node("all", 3, node("x", 1), node("y", 2))
	root.sortAndPrune(cutoff(root, 3, 5000))
	if len(root.Children) != 2 || root.Children[0].Name != "y" {
		t.Errorf("unpruned tree %+v", root.Children)
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
