package counters

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/clrspy/clrspy/internal/tracegen"
	"github.com/clrspy/clrspy/nettrace"
)

// Synthetic events shaped exactly as the runtime writes them (metadata
// field lists copied from a .NET 10 session's metadata records).

func str(n string) nettrace.Field {
	return nettrace.Field{Name: n, Type: nettrace.FieldType{Code: nettrace.TypeString}}
}
func typed(n string, c nettrace.TypeCode) nettrace.Field {
	return nettrace.Field{Name: n, Type: nettrace.FieldType{Code: c}}
}

// wrap nests fields as EventSource.Write does: {"": {Payload: {...}}}.
func wrap(fs ...nettrace.Field) []nettrace.Field {
	inner := nettrace.Field{Name: "Payload", Type: nettrace.FieldType{Code: nettrace.TypeObject, Fields: fs}}
	return []nettrace.Field{{Type: nettrace.FieldType{Code: nettrace.TypeObject, Fields: []nettrace.Field{inner}}}}
}

var (
	meanMeta = &nettrace.Metadata{Provider: RuntimeSource, EventName: "EventCounters", HasFields: true, Fields: wrap(
		str("Name"), str("DisplayName"), typed("Mean", nettrace.TypeDouble), typed("StandardDeviation", nettrace.TypeDouble),
		typed("Count", nettrace.TypeInt32), typed("Min", nettrace.TypeDouble), typed("Max", nettrace.TypeDouble),
		typed("IntervalSec", nettrace.TypeSingle), str("Series"), str("CounterType"), str("Metadata"), str("DisplayUnits"))}
	sumMeta = &nettrace.Metadata{Provider: RuntimeSource, EventName: "EventCounters", HasFields: true, Fields: wrap(
		str("Name"), str("DisplayName"), str("DisplayRateTimeScale"), typed("Increment", nettrace.TypeDouble),
		typed("IntervalSec", nettrace.TypeSingle), str("Metadata"), str("Series"), str("CounterType"), str("DisplayUnits"))}
	rateMeta = &nettrace.Metadata{Provider: MetricsSource, EventName: "CounterRateValuePublished", Version: 2, HasFields: true,
		Fields: []nettrace.Field{str("sessionId"), str("meterName"), str("meterVersion"), str("instrumentName"), str("unit"),
			str("tags"), str("rate"), str("value"), typed("instrumentId", nettrace.TypeInt32)}}
	upDownMeta = &nettrace.Metadata{Provider: MetricsSource, EventName: "UpDownCounterRateValuePublished", Version: 2, HasFields: true,
		Fields: rateMeta.Fields}
	beginMeta = &nettrace.Metadata{Provider: MetricsSource, EventName: "BeginInstrumentReporting", Version: 3, HasFields: true,
		Fields: []nettrace.Field{str("sessionId"), str("meterName"), str("meterVersion"), str("instrumentName"), str("instrumentType"),
			str("unit"), str("description"), str("instrumentTags"), str("meterTags"), str("meterScopeHash"),
			typed("instrumentId", nettrace.TypeInt32), str("meterTelemetrySchemaUrl")}}
	otherMeta = &nettrace.Metadata{Provider: MetricsSource, EventName: "MultipleSessionsNotSupportedError", HasFields: true,
		Fields: []nettrace.Field{str("runningSessionId")}}
)

type payload = tracegen.Payload

func mean(name, units string, v float64) payload {
	return payload(nil).String(name).String("Display").F64(v).F64(0).I32(1).F64(v).F64(v).F32(1).String("Interval=1000").String("Mean").String("").String(units)
}
func sum(name, units string, inc float64) payload {
	return payload(nil).String(name).String("Display").String("00:00:01").F64(inc).F32(2).String("").String("Interval=2000").String("Sum").String(units)
}
func rate(session, inst, tags, rate, value string) payload {
	return payload(nil).String(session).String(RuntimeMeter).String("").String(inst).String("{x}").String(tags).String(rate).String(value).I32(1)
}

// feeder describes counter events on one thread, 1 µs apart (package
// tracegen), and reads them back through the analyzer when a test asks.
type feeder struct {
	t   *testing.T
	a   *Analyzer
	g   *tracegen.Trace
	fed int // events read through a so far
}

func newFeeder(t *testing.T, opts Options) *feeder {
	g := tracegen.New()
	return &feeder{t: t, a: New(g.Header(), opts), g: g}
}

func (f *feeder) feed(m *nettrace.Metadata, p payload) {
	f.g.Thread(1).After(time.Microsecond).Event(m, p)
}

// sync writes the stream, reads it back and gives the analyzer the events
// it has not had yet (a test may look mid-stream, then describe more).
func (f *feeder) sync() *Analyzer {
	f.t.Helper()
	n := 0
	f.g.Run(f.t, func(ev *nettrace.Event) {
		if n >= f.fed {
			f.a.Event(ev)
		}
		n++
	})
	f.fed = n
	if err := f.a.Result().CheckValid(); err != nil {
		f.t.Error(err)
	}
	return f.a
}

// TestEventCountersMapped is what a .NET 8 session shows: EventCounters
// only, under the semantic-convention names, in their units, with the
// cumulative GC counts made exclusive.
func TestEventCountersMapped(t *testing.T) {
	f := newFeeder(t, Options{})
	for i := 0; i < 3; i++ {
		f.feed(meanMeta, mean("working-set", "MB", 40.5+float64(i)))
		f.feed(sumMeta, sum("gen-0-gc-count", "", 10)) // every GC
		f.feed(sumMeta, sum("gen-1-gc-count", "", 4))  // gen1 and gen2
		f.feed(sumMeta, sum("gen-2-gc-count", "", 1))
		f.feed(sumMeta, sum("total-pause-time-by-gc", "ms", 12.5))
		f.feed(meanMeta, mean("methods-jitted-count", "", 300+float64(i)))
		f.feed(sumMeta, sum("exception-count", "", 2))
		f.feed(meanMeta, mean("cpu-usage", "%", 3))
		f.feed(meanMeta, mean("gc-heap-size", "MB", 2))
	}
	if st := f.sync().Stats(); st.Events != 27 || st.DecodeErrors != 0 {
		t.Fatalf("stats %+v", st)
	}
	r := f.sync().Result()
	if r.Meter || !r.EventCounters {
		t.Errorf("sources: meter %v eventcounters %v", r.Meter, r.EventCounters)
	}
	check := func(name string, attrs []string, kind Kind, unit string, value, rate float64, fromStart bool) {
		t.Helper()
		m, ok := r.Get(name, attrs...)
		if !ok {
			t.Fatalf("no %s %v in %+v", name, attrs, r.Metrics)
		}
		if m.Kind != kind || m.Unit != unit || math.Abs(m.Value-value) > 1e-9 || math.Abs(m.Rate-rate) > 1e-9 || m.FromStart != fromStart ||
			m.Source != SourceEventCounters {
			t.Errorf("%s %v: %+v; want kind %s unit %s value %v rate %v from_start %v", name, attrs, m, kind, unit, value, rate, fromStart)
		}
	}
	check("dotnet.process.memory.working_set", nil, KindUpDownCounter, "By", 42.5e6, 0, false)
	// Cumulative increments 10, 4, 1 per interval (of 2 s): exclusive 6, 3, 1.
	check("dotnet.gc.collections", []string{"dotnet.gc.heap.generation=gen0"}, KindCounter, "{collection}", 18, 3, false)
	check("dotnet.gc.collections", []string{"dotnet.gc.heap.generation=gen1"}, KindCounter, "{collection}", 9, 1.5, false)
	check("dotnet.gc.collections", []string{"dotnet.gc.heap.generation=gen2"}, KindCounter, "{collection}", 3, 0.5, false)
	check("dotnet.gc.pause.time", nil, KindCounter, "s", 0.0375, 0.00625, false)
	check("dotnet.jit.compiled_methods", nil, KindCounter, "{method}", 302, 0, true)
	check("dotnet.exceptions", []string{"error.type=_OTHER"}, KindCounter, "{exception}", 6, 1, false)
	check("cpu-usage", nil, KindGauge, "%", 3, 0, false)
	check("gc-heap-size", nil, KindGauge, "By", 2e6, 0, false)
	if m, _ := r.Get("cpu-usage"); m.SemConv {
		t.Error("cpu-usage claims a semantic-convention name")
	}
	if len(r.Metrics) != 9 {
		t.Errorf("%d metrics, want 9", len(r.Metrics))
	}
}

// TestMeterWins: once the runtime's meter publishes (.NET 9+), every
// semantic-convention name comes from it, and other sessions' events are
// ignored.
func TestMeterWins(t *testing.T) {
	if provs := Providers(&Options{}); len(provs) != 1 || provs[0].Name != RuntimeSource || provs[0].Args != "EventCounterIntervalSec=1" {
		t.Fatalf("default providers %+v", provs)
	}
	opts := Options{Meter: true, Interval: 2500 * time.Millisecond}
	provs := Providers(&opts)
	if !strings.HasPrefix(opts.SessionID, "clrspy-") || len(provs) != 2 || provs[1].Name != MetricsSource || provs[1].Keywords != 2 ||
		provs[0].Args != "EventCounterIntervalSec=2.5" ||
		provs[1].Args != "SessionId="+opts.SessionID+";Metrics=System.Runtime;RefreshInterval=2.5;MaxTimeSeries=1000;MaxHistograms=20" {
		t.Fatalf("providers %+v", provs)
	}
	f := newFeeder(t, opts)
	f.feed(sumMeta, sum("exception-count", "", 2))
	f.feed(meanMeta, mean("active-timer-count", "", 3))
	if r := f.sync().Result(); len(r.Metrics) != 2 || r.Metrics[0].Name != "dotnet.exceptions" {
		t.Fatalf("before the meter: %+v", r.Metrics)
	}
	f.feed(beginMeta, payload(nil).String(opts.SessionID).String(RuntimeMeter).String("").String("dotnet.gc.collections").String("ObservableCounter`1").
		String("{collection}").String("GCs").String("").String("").String("").I32(1).String(""))
	f.feed(rateMeta, rate(opts.SessionID, "dotnet.gc.collections", "gc.heap.generation=gen0", "", "7"))
	f.feed(rateMeta, rate(opts.SessionID, "dotnet.gc.collections", "gc.heap.generation=gen0", "3", "10"))
	f.feed(rateMeta, rate("someone-else", "dotnet.gc.collections", "gc.heap.generation=gen0", "5", "99"))
	f.feed(rateMeta, rate(opts.SessionID, "dotnet.thread_pool.thread.count", "", "", "4"))
	f.feed(upDownMeta, rate(opts.SessionID, "dotnet.timer.count", "", "1", "5"))
	f.feed(otherMeta, payload(nil).String(opts.SessionID)) // the error is another client's
	r := f.sync().Result()
	if !r.Meter || len(r.Errors) != 0 {
		t.Errorf("meter %v errors %v", r.Meter, r.Errors)
	}
	if _, ok := r.Get("dotnet.exceptions"); ok {
		t.Error("the EventCounter's dotnet.exceptions survived the meter")
	}
	m, ok := r.Get("dotnet.gc.collections", "dotnet.gc.heap.generation=gen0")
	if !ok || m.Value != 10 || !m.FromStart || m.Rate != 1.2 || m.Kind != KindCounter || m.Description != "GCs" || m.Source != SourceMeter {
		t.Errorf("gen0: %+v", m)
	}
	// Published as an observable counter; the convention says up-down.
	if m, _ := r.Get("dotnet.thread_pool.thread.count"); m.Value != 4 || m.Kind != KindUpDownCounter {
		t.Errorf("thread count: %+v", m)
	}
	if m, _ := r.Get("dotnet.timer.count"); m.Value != 5 || m.Kind != KindUpDownCounter || m.Source != SourceMeter {
		t.Errorf("timers: %+v", m)
	}
	f.feed(otherMeta, payload(nil).String("dotnet-counters-1"))
	if r := f.sync().Result(); len(r.Errors) != 1 || !strings.Contains(r.Errors[0], "another tool") {
		t.Errorf("errors %v", r.Errors)
	}
}

// TestShortPayload: a payload cut before its metadata's end is a decode
// error, not a panic.
func TestShortPayload(t *testing.T) {
	f := newFeeder(t, Options{})
	p := mean("working-set", "MB", 1)
	for _, n := range []int{0, 3, 20, len(p) - 1} {
		f.feed(meanMeta, p[:n])
	}
	if st := f.sync().Stats(); st.DecodeErrors != 4 || st.Events != 0 || st.FirstError == nil {
		t.Errorf("stats %+v", st)
	}
	if r := f.sync().Result(); len(r.Metrics) != 0 {
		t.Errorf("metrics from cut payloads: %+v", r.Metrics)
	}
}

// TestMaxSeries bounds the series kept.
func TestMaxSeries(t *testing.T) {
	f := newFeeder(t, Options{MaxSeries: 2})
	for _, n := range []string{"a", "b", "c", "a", "d"} {
		f.feed(meanMeta, mean(n, "", 1))
	}
	if r := f.sync().Result(); len(r.Metrics) != 2 || r.DroppedSeries != 2 {
		t.Errorf("%d metrics, %d dropped", len(r.Metrics), r.DroppedSeries)
	}
}

// TestEventNoAlloc: counter events do not allocate once their series exist.
func TestEventNoAlloc(t *testing.T) {
	opts := Options{SessionID: "s1", Interval: 2 * time.Second}
	f := newFeeder(t, opts)
	evs := []struct {
		m *nettrace.Metadata
		p payload
	}{
		{meanMeta, mean("working-set", "MB", 40)},
		{sumMeta, sum("exception-count", "", 2)},
		{rateMeta, rate("s1", "dotnet.gc.collections", "gc.heap.generation=gen0", "3", "10")},
		{upDownMeta, rate("s1", "dotnet.timer.count", "", "1", "5")},
	}
	for _, e := range evs {
		f.feed(e.m, e.p)
	}
	f.sync()
	round := f.g.Events() // as built: the analyzer's own cost, not the reader's
	n := testing.AllocsPerRun(200, func() {
		for i := range round {
			f.a.Event(&round[i])
		}
	})
	if n != 0 {
		t.Errorf("%v allocations per round of counter events", n)
	}
	if m, _ := f.sync().Result().Get("dotnet.gc.collections"); m.Value != 10 || m.Rate != 1.5 {
		t.Errorf("gen0 after the rounds: %+v (rate from the 2 s interval)", m)
	}
}
