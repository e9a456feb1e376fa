package metrics

import (
	"strings"
	"testing"
)

// TestHeapGrowth: serve --snapshot-on-gen2-growth's diff is one gauge
// series per type (bytes), a target without one has none, and before its
// first session (no monitor snapshot yet) it is exported all the same.
func TestHeapGrowth(t *testing.T) {
	src := &fakeSource{targets: []Target{
		{Pid: "7", Process: "Shop", Up: true, HeapGrowth: []HeapGrowth{{Type: "Shop.Order", Bytes: 960000}, {Type: "Shop.Order[]", Bytes: 240024}}},
		{Pid: "8", Process: "Cart", Up: true},
	}}
	reg, err := NewRegistry(src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	text := string(scrape(t, Handler(reg), ""))
	for _, want := range []string{
		"# TYPE clrspy_heap_growth_bytes gauge",
		`clrspy_heap_growth_bytes{pid="7",process="Shop",type="Shop.Order"} 960000`,
		`clrspy_heap_growth_bytes{pid="7",process="Shop",type="Shop.Order[]"} 240024`,
	} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("exposition lacks %s", want)
		}
	}
	if n := strings.Count(text, "\nclrspy_heap_growth_bytes{"); n != 2 {
		t.Errorf("%d heap growth series, want 2", n)
	}
}
