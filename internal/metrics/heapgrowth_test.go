package metrics

import (
	"bytes"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
)

// exposition is the text exposition of family f, of Prometheus type typ,
// with its samples (one line each): what testutil.GatherAndCompare reads.
func exposition(f *Family, typ string, samples ...string) string {
	return "# HELP " + f.Name + " " + f.Help + "\n# TYPE " + f.Name + " " + typ + "\n" + strings.Join(samples, "\n") + "\n"
}

// compare gathers reg and compares the named families with want, every
// series of them: one missing, one more or another value is a difference.
func compare(t *testing.T, reg prometheus.Gatherer, want string, names ...string) {
	t.Helper()
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), names...); err != nil {
		t.Error(err)
	}
}

// TestHeapGrowth: serve --snapshot-on-gen2-growth's diff is one gauge
// series per type (bytes), a target without one has none, and before its
// first session (no monitor snapshot yet) it is exported all the same.
func TestHeapGrowth(t *testing.T) {
	src := &fakeSource{ts: []Target{
		{Pid: "7", Process: "Shop", Up: true, HeapGrowth: []HeapGrowth{{Type: "Shop.Order", Bytes: 960000}, {Type: "Shop.Order[]", Bytes: 240024}}},
		{Pid: "8", Process: "Cart", Up: true},
	}}
	reg, err := newRegistry(src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	compare(t, reg, exposition(famHeapGrowth, "gauge",
		`clrspy_heap_growth_bytes{pid="7",process="Shop",type="Shop.Order"} 960000`,
		`clrspy_heap_growth_bytes{pid="7",process="Shop",type="Shop.Order[]"} 240024`,
	), famHeapGrowth.Name)
}

// TestPromlint: the exposition of the golden targets passes promlint but
// for the four gauges whose names are the OpenTelemetry semantic
// conventions' (dotnet.assembly.count and the like, translated as the
// convention says): renaming them would part them from every other
// exporter of the convention.
func TestPromlint(t *testing.T) {
	reg, err := newRegistry(goldenSource(t), Options{Self: true})
	if err != nil {
		t.Fatal(err)
	}
	ps, err := promlint.New(bytes.NewReader(scrape(t, Handler(reg), ""))).Lint()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range ps {
		got = append(got, p.Metric+": "+p.Text)
	}
	sort.Strings(got)
	suffix := `: non-histogram and non-summary metrics should not have "_count" suffix`
	want := []string{"dotnet_assembly_count" + suffix, "dotnet_process_cpu_count" + suffix,
		"dotnet_thread_pool_thread_count" + suffix, "dotnet_timer_count" + suffix}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("promlint:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
