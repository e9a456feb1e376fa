package metrics

import (
	"bytes"
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/counters"
	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/internal/monitor"
	"github.com/clrspy/clrspy/internal/procfs"
	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/memory"
	"github.com/clrspy/clrspy/source"
)

// fixtureTarget runs a fixture trace through a monitor, as serve runs a
// live session, and returns the target the exporter sees.
func fixtureTarget(t *testing.T, name, pid, process string) Target {
	t.Helper()
	st, err := source.Open(source.Spec{File: tracetest.Path(t, name)})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	h := NewGCHistograms()
	m := monitor.New(st.Header(), monitor.Options{Locks: true, OnGC: h.Observe})
	if _, err := m.Run(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	return Target{Pid: pid, Process: process, Up: true, Snapshot: m.Snapshot(), GC: h}
}

type fakeSource struct {
	ts []Target
	h  Health
}

func (f *fakeSource) targets() []Target { return f.ts }
func (f *fakeSource) health() Health    { return f.h }

// goldenSource is two targets from the fixtures (workstation GCs; lock
// contention), the second given runtime counters as the EventCounters
// produce them, and an exited third target.
func goldenSource(t *testing.T) *fakeSource {
	wks := fixtureTarget(t, "gc-wks.nettrace", "101", "Workload")
	locks := fixtureTarget(t, "contention.nettrace", "202", "Locks")
	locks.Snapshot.Counters = &counters.Result{EventCounters: true, Metrics: []counters.Metric{
		{Name: "dotnet.assembly.count", SemConv: true, Kind: counters.KindUpDownCounter, Value: 12},
		{Name: "dotnet.exceptions", SemConv: true, Kind: counters.KindCounter, Value: 25,
			Attributes: []counters.Attribute{{Key: "error.type", Value: "_OTHER"}}},
		{Name: "dotnet.gc.heap.total_allocated", SemConv: true, Kind: counters.KindCounter, Value: 67108864},
		// Sizes from the counters before the session saw a GC (the
		// contention run made none).
		{Name: "dotnet.gc.last_collection.heap.size", SemConv: true, Kind: counters.KindUpDownCounter, Value: 4096,
			Attributes: []counters.Attribute{{Key: "dotnet.gc.heap.generation", Value: "gen0"}}},
		// The events' figures win over the counters'.
		{Name: "dotnet.gc.collections", SemConv: true, Kind: counters.KindCounter, Value: 999,
			Attributes: []counters.Attribute{{Key: "dotnet.gc.heap.generation", Value: "gen0"}}},
		{Name: "dotnet.process.memory.working_set", SemConv: true, Kind: counters.KindUpDownCounter, Value: 52428800},
		{Name: "dotnet.thread_pool.queue.length", SemConv: true, Kind: counters.KindUpDownCounter, Value: 0},
		{Name: "dotnet.thread_pool.thread.count", SemConv: true, Kind: counters.KindUpDownCounter, Value: 4},
		{Name: "dotnet.timer.count", SemConv: true, Kind: counters.KindUpDownCounter, Value: 7},
		// The rest of the convention's table (the .NET 9+ meter's).
		{Name: "dotnet.process.cpu.time", SemConv: true, Kind: counters.KindCounter, Value: 1.25, FromStart: true,
			Attributes: []counters.Attribute{{Key: "cpu.mode", Value: "system"}}},
		{Name: "dotnet.process.cpu.time", SemConv: true, Kind: counters.KindCounter, Value: 3.5, FromStart: true,
			Attributes: []counters.Attribute{{Key: "cpu.mode", Value: "user"}}},
		{Name: "dotnet.process.cpu.count", SemConv: true, Kind: counters.KindUpDownCounter, Value: 2},
		{Name: "dotnet.gc.last_collection.heap.fragmentation.size", SemConv: true, Kind: counters.KindUpDownCounter, Value: 1024,
			Attributes: []counters.Attribute{{Key: "dotnet.gc.heap.generation", Value: "gen0"}}},
		{Name: "dotnet.gc.last_collection.memory.committed_size", SemConv: true, Kind: counters.KindUpDownCounter, Value: 8388608},
		{Name: "dotnet.thread_pool.work_item.count", SemConv: true, Kind: counters.KindCounter, Value: 420, FromStart: true},
		{Name: "dotnet.jit.compilation.time", SemConv: true, Kind: counters.KindCounter, Value: 0.64, FromStart: true},
		{Name: "dotnet.jit.compiled_methods", SemConv: true, Kind: counters.KindCounter, Value: 1500, FromStart: true},
		{Name: "dotnet.jit.compiled_il.size", SemConv: true, Kind: counters.KindCounter, Value: 65536, FromStart: true},
		// Not exported: no semantic-convention name.
		{Name: "cpu-usage", Kind: counters.KindGauge, Value: 12.5},
	}}
	// What the runtime counted before the session (its meter's totals at
	// the attach): added to the totals clrspy measures.
	locks.Snapshot.GC.BeforeSession = &monitor.BeforeSession{Generations: [3]int{12, 3, 1}, PauseRuntimeMS: 40, LockContentions: 5}
	wks.LastEventAge = 1500 * time.Millisecond
	// A split of every kind (adding up to its RSS) under a cgroup limit;
	// the locks target's cgroup has none and does not count OOM kills.
	var parts []memory.Part
	var rss uint64
	for i, k := range memory.Kinds {
		b := uint64(i+1) << 20
		parts = append(parts, memory.Part{Kind: k, Bytes: b})
		rss += b
	}
	wks.Memory = []memory.Sample{{Split: memory.Split{Rss: rss, Parts: parts}}}
	wks.Cgroup = &procfs.CgroupMemory{Version: 2, Limit: 512 << 20, Usage: 100 << 20, OOMKills: 1}
	locks.Cgroup = &procfs.CgroupMemory{Version: 1, Usage: 60 << 20, OOMKills: -1}
	locks.LastEventAge = 42 * time.Second // a stopped process
	return &fakeSource{
		ts: []Target{wks, locks, {Pid: "303", Process: "Gone"}},
		h: Health{Sessions: 2, AttachErrors: map[string]uint64{"permission": 3, "gone": 1},
			CaptureErrors: map[string]uint64{"no_space": 1, "skipped": 4}},
	}
}

func scrape(t *testing.T, h http.Handler, accept string) []byte {
	t.Helper()
	req := httptest.NewRequest("GET", "/metrics", nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Fatalf("scrape: %d %s", rec.Code, rec.Body)
	}
	return rec.Body.Bytes()
}

// TestExposition pins the exposition (names, types, units, labels, help
// texts, values from the fixtures) in Prometheus text and OpenMetrics: a
// rename is a reviewed diff (go test ./metrics -update).
func TestExposition(t *testing.T) {
	src := goldenSource(t)
	reg, err := newRegistry(src, Options{Labels: map[string]string{"cluster": "test"}})
	if err != nil {
		t.Fatal(err)
	}
	h := Handler(reg)
	text := scrape(t, h, "")
	tracetest.Golden(t, "exposition.txt", text)
	om := scrape(t, h, "application/openmetrics-text; version=1.0.0")
	tracetest.Golden(t, "exposition.openmetrics.txt", om)

	// Facts of the fixtures, as their README gives them: 27/8/5 GCs, and
	// the wait the contention workload measured.
	parser := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	get := func(name string, labels ...string) float64 {
		f := fams[name]
		if f == nil {
			t.Fatalf("no family %s", name)
		}
	next:
		for _, m := range f.Metric {
			for i := 0; i+1 < len(labels); i += 2 {
				found := false
				for _, lp := range m.Label {
					if lp.GetName() == labels[i] && lp.GetValue() == labels[i+1] {
						found = true
					}
				}
				if !found {
					continue next
				}
			}
			switch {
			case m.Counter != nil:
				return m.Counter.GetValue()
			case m.Gauge != nil:
				return m.Gauge.GetValue()
			case m.Histogram != nil:
				return m.Histogram.GetSampleSum()
			}
		}
		t.Fatalf("%s%v: no series", name, labels)
		return 0
	}
	for gen, want := range map[string]float64{"gen0": 27, "gen1": 8, "gen2": 5} {
		if got := get("dotnet_gc_collections_total", "pid", "101", "dotnet_gc_heap_generation", gen); got != want {
			t.Errorf("%s: %v GCs, want %v", gen, got, want)
		}
	}
	// The fixture's README: the runtime counted 92.083 ms
	// (GC.GetTotalPauseDuration), PerfView's definition sums 92.485 ms.
	if got := get("clrspy_gc_pause_runtime_seconds_total", "pid", "101"); math.Abs(got-0.092083) > 0.005*0.092083 {
		t.Errorf("runtime's pause %v s, the runtime said 0.092083", got)
	}
	if got := get("dotnet_gc_pause_time_seconds_total", "pid", "101"); got < 0.092083 {
		t.Errorf("stopped time %v s, less than the runtime's own pause", got)
	}
	var pauseSum float64
	for _, m := range fams["clrspy_gc_pause_seconds"].Metric {
		pauseSum += m.Histogram.GetSampleSum()
	}
	if math.Abs(pauseSum-0.092485) > 0.0000005 {
		t.Errorf("pause histograms sum to %v s, want the total", pauseSum)
	}
	wait := get("clrspy_lock_wait_seconds", "pid", "202")
	if wait < 0.9*0.5188196 || wait > 0.5188196 {
		t.Errorf("lock waits %v s, the workload measured 0.519 s (its own waits include the spinning)", wait)
	}
	// The second target's totals run from its process start: what the
	// runtime counted before the session plus what clrspy saw (no GC, the
	// contention workload's waits).
	for gen, want := range map[string]float64{"gen0": 12, "gen1": 3, "gen2": 1} {
		if got := get("dotnet_gc_collections_total", "pid", "202", "dotnet_gc_heap_generation", gen); got != want {
			t.Errorf("%s: %v GCs from the process start, want %v (the counters' 999 must not leak into the events' family)", gen, got, want)
		}
	}
	if got := get("dotnet_gc_pause_time_seconds_total", "pid", "202"); got != 0.040 {
		t.Errorf("pause time %v, want the runtime's 0.040 s before the session", got)
	}
	if got, seen := get("dotnet_monitor_lock_contentions_total", "pid", "202"), get("dotnet_monitor_lock_contentions_total", "pid", "101"); got <= 5 || seen != 0 {
		t.Errorf("lock contentions %v (want 5 before the session and the fixture's after), %v", got, seen)
	}
	for _, c := range []struct {
		name  string
		label []string
		want  float64
	}{
		{"dotnet_process_cpu_time_seconds_total", []string{"cpu_mode", "user"}, 3.5},
		{"dotnet_process_cpu_time_seconds_total", []string{"cpu_mode", "system"}, 1.25},
		{"dotnet_process_cpu_count", nil, 2},
		{"dotnet_gc_last_collection_heap_fragmentation_size_bytes", []string{"dotnet_gc_heap_generation", "gen0"}, 1024},
		{"dotnet_gc_last_collection_memory_committed_size_bytes", nil, 8388608},
		{"dotnet_thread_pool_work_item_count_total", nil, 420},
		{"dotnet_jit_compilation_time_seconds_total", nil, 0.64},
		{"dotnet_jit_compiled_methods_total", nil, 1500},
		{"dotnet_jit_compiled_il_size_bytes_total", nil, 65536},
	} {
		if got := get(c.name, append([]string{"pid", "202"}, c.label...)...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.label, got, c.want)
		}
	}
}

// TestNativeHistogram: the protobuf exposition carries the pause
// histograms' native buckets beside the classic ones, as client_golang's
// own histograms would bucket the same pauses.
func TestNativeHistogram(t *testing.T) {
	src := goldenSource(t)
	reg, err := newRegistry(src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	body := scrape(t, Handler(reg), string(expfmt.NewFormat(expfmt.TypeProtoDelim)))
	dec := expfmt.NewDecoder(bytes.NewReader(body), expfmt.NewFormat(expfmt.TypeProtoDelim))
	var pause *dto.MetricFamily
	for {
		var mf dto.MetricFamily
		if err := dec.Decode(&mf); err != nil {
			break
		}
		if mf.GetName() == "clrspy_gc_pause_seconds" {
			pause = &mf
		}
	}
	if pause == nil {
		t.Fatal("no clrspy_gc_pause_seconds in the protobuf exposition")
	}
	// The same pauses through a client_golang native histogram.
	ref := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "ref", Buckets: prometheus.DefBuckets,
		NativeHistogramBucketFactor: 1.1, NativeHistogramMaxBucketNumber: 0}, []string{"gen", "type"})
	for _, tg := range src.ts[:1] {
		for _, g := range tg.Snapshot.GCs {
			if g.Complete {
				ref.WithLabelValues(g.Gen[:1], g.Type.String()).Observe(g.PauseMS / 1e3)
			}
		}
	}
	checked := 0
	for _, m := range pause.Metric {
		h := m.GetHistogram()
		if h.GetSchema() != nativeSchema || len(h.Bucket) != len(gcpause.PauseBounds) {
			t.Fatalf("schema %d, %d classic buckets", h.GetSchema(), len(h.Bucket))
		}
		var n uint64
		var c int64
		for _, d := range h.PositiveDelta {
			c += d
			n += uint64(c)
		}
		if n+h.GetZeroCount() != h.GetSampleCount() {
			t.Errorf("native buckets hold %d of %d pauses", n, h.GetSampleCount())
		}
		lbl := map[string]string{}
		for _, lp := range m.Label {
			lbl[lp.GetName()] = lp.GetValue()
		}
		if lbl["pid"] != "101" {
			continue
		}
		var want dto.Metric
		ref.WithLabelValues(lbl["dotnet_gc_heap_generation"][3:], lbl["gc_type"]).(prometheus.Metric).Write(&want)
		wh := want.GetHistogram()
		if spanString(h) != spanString(wh) || h.GetSampleCount() != wh.GetSampleCount() {
			t.Errorf("%v: native buckets %s, client_golang's %s", lbl, spanString(h), spanString(wh))
		}
		checked++
	}
	if checked != 4 {
		t.Errorf("%d pause series of the workstation fixture, want 4 (gen0 N/F, gen1 N, gen2 B)", checked)
	}
}

// spanString is a native histogram's spans and deltas.
func spanString(h *dto.Histogram) string {
	var b strings.Builder
	for _, s := range h.PositiveSpan {
		b.WriteString("[")
		b.WriteString(itoa(int(s.GetOffset())))
		b.WriteString(":")
		b.WriteString(itoa(int(s.GetLength())))
		b.WriteString("]")
	}
	for _, d := range h.PositiveDelta {
		b.WriteString(" ")
		b.WriteString(itoa(int(d)))
	}
	return b.String()
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestDropped: a target the source stops listing leaves no series.
func TestDropped(t *testing.T) {
	src := goldenSource(t)
	reg, _ := newRegistry(src, Options{})
	before := string(scrape(t, Handler(reg), ""))
	src.ts = src.ts[1:]
	after := string(scrape(t, Handler(reg), ""))
	if !strings.Contains(before, `pid="101"`) || strings.Contains(after, `pid="101"`) || !strings.Contains(after, `pid="202"`) {
		t.Errorf("pid 101 still exported after it was dropped")
	}
}

func TestParseLabel(t *testing.T) {
	m := map[string]string{}
	for _, c := range []struct{ in, want string }{
		{"cluster=prod", ""},
		{"cluster=again", `--label "cluster=again": cluster given twice`},
		{"nolabel", `--label "nolabel": want name=value`},
		{"1x=y", `--label "1x=y": "1x" is not a valid Prometheus label name`},
		{"pid=3", `--label "pid=3": pid is a label clrspy sets itself`},
		{"reason=x", `--label "reason=x": reason is a label clrspy sets itself`},
		{"__x=y", `--label "__x=y": "__x" is not a valid Prometheus label name`},
		{"empty=", ""},
	} {
		err := ParseLabel(c.in, m)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.in, got, c.want)
		}
	}
	if len(m) != 2 || m["cluster"] != "prod" || m["empty"] != "" {
		t.Errorf("labels %v", m)
	}
}

// gcOf is a complete GC for the histogram tests.
func gcOf(gen int, typ int, pauseNS int64) *gcpause.GC {
	g := &gcpause.GC{Generation: gen, PauseNanos: pauseNS, SuspendNanos: pauseNS / 10, Complete: true, StartSeen: true}
	g.Type = 0
	if typ > 0 {
		g.Type = 1
	}
	return g
}

// TestNativeKey: bucket boundaries as client_golang puts them (bucket i
// holds (2^((i-1)/8), 2^(i/8)]).
func TestNativeKey(t *testing.T) {
	for v, want := range map[float64]int{1: 0, 1.0001: 1, 2: 8, 0.5: -8, 0.50001: -7, math.Exp2(1.0 / 8): 1, 0.0001: -106} {
		if got := nativeKey(v); got != want {
			t.Errorf("nativeKey(%v) = %d, want %d", v, got, want)
		}
	}
	h := NewGCHistograms()
	h.Observe(gcOf(0, 0, 1_500_000))
	h.Observe(&gcpause.GC{Generation: 0, PauseNanos: 7e9, StartSeen: true}) // incomplete: not counted
	h.Observe(&gcpause.GC{Generation: 0, PauseNanos: 7e9, Complete: true})  // begun before the session: not counted
	n := 0
	h.pauses(func(gen, typ string, hh analysis.Histogram, _ *Native) {
		n++
		if gen != "gen0" || typ != "NonConcurrent" || hh.Count != 1 || hh.SumNanos != 1_500_000 || hh.Counts[4] != 1 {
			t.Errorf("%s %s %+v", gen, typ, hh)
		}
	})
	if n != 1 {
		t.Errorf("%d pause series", n)
	}
}
