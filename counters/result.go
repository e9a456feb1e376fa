package counters

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/clrspy/clrspy/analysis"
)

// Kind is a metric's instrument kind, as OpenTelemetry names them.
//
// dotnet-counters shows three kinds: "gauge" (EventCounters "Mean",
// polled values: here KindGauge or, for values that are sums such as a
// thread count, KindUpDownCounter), "rate" (EventCounters "Sum", the
// increase of a total over each interval: here KindCounter, whose Rate is
// that increase per second and Value the running total) and histograms.
type Kind uint8

// Kinds.
const (
	KindGauge         Kind = iota + 1 // a current value
	KindUpDownCounter                 // a current value that is a sum (a Prometheus gauge)
	KindCounter                       // a monotonic total (a Prometheus counter)
	KindHistogram                     // a distribution: Count, Sum, Quantiles
)

var kindNames = [...]string{KindGauge: "gauge", KindUpDownCounter: "updowncounter", KindCounter: "counter", KindHistogram: "histogram"}

func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "unknown"
}

// MarshalText writes the kind's name (JSON).
func (k Kind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText reads a kind's name.
func (k *Kind) UnmarshalText(b []byte) error {
	for i, n := range kindNames {
		if n != "" && n == string(b) {
			*k = Kind(i)
			return nil
		}
	}
	return fmt.Errorf("unknown metric kind %q", b)
}

// Source says which of the runtime's publishers a value came from.
type Source string

// Sources.
const (
	SourceMeter         Source = "meter"         // System.Diagnostics.Metrics (.NET 9+ for System.Runtime)
	SourceEventCounters Source = "eventcounters" // EventCounterIntervalSec
)

// Quantile is one quantile of a histogram.
type Quantile struct {
	Quantile float64 `json:"quantile"`
	Value    float64 `json:"value"`
}

// Metric is one series' current state.
type Metric struct {
	// Name is the OpenTelemetry semantic-convention name when one exists
	// (SemConv), else the name the runtime gave the counter.
	Name       string      `json:"name"`
	SemConv    bool        `json:"semconv"`
	Attributes []Attribute `json:"attributes,omitempty"`
	Unit       string      `json:"unit"` // UCUM: "By", "s", "{exception}", "%"
	Kind       Kind        `json:"kind"`
	// Value is the current value; for a counter, its total.
	Value float64 `json:"value"`
	// FromStart says a counter's total runs from the process start;
	// false: from the session's start (EventCounters increments, the meter's
	// dotnet.exceptions).
	FromStart bool `json:"from_start"`
	// Rate is a counter's increase per second over the last interval
	// (HasRate false before the second interval of an observable counter).
	Rate    float64 `json:"rate"`
	HasRate bool    `json:"has_rate"`
	// IntervalSec is the interval the last value covers.
	IntervalSec float64 `json:"interval_sec"`
	// UpdatedNanos is the event time of the last value, ns since the
	// session start.
	UpdatedNanos int64 `json:"updated_ns"`

	Source      Source `json:"source"`
	Provider    string `json:"provider"`     // the EventSource or meter
	RuntimeName string `json:"runtime_name"` // the runtime's own name ("exception-count")
	Description string `json:"description,omitempty"`

	// Histograms.
	Count     float64    `json:"count,omitempty"`
	Sum       float64    `json:"sum,omitempty"`
	Quantiles []Quantile `json:"quantiles,omitempty"`
}

// Attr returns the value of attribute key ("" when absent).
func (m *Metric) Attr(key string) string {
	for _, a := range m.Attributes {
		if a.Key == key {
			return a.Value
		}
	}
	return ""
}

// Result is the counters' state.
type Result struct {
	// Metrics sorted by name, then attributes.
	Metrics []Metric `json:"metrics"`
	// Meter and EventCounters say which publishers sent values.
	Meter         bool `json:"meter"`
	EventCounters bool `json:"event_counters"`
	// Errors are the runtime's messages about this session (another tool
	// holds the meter, an instrument callback failed), at most 8.
	Errors        []string `json:"errors,omitempty"`
	DroppedSeries int      `json:"dropped_series,omitempty"`
	// LimitReached: the runtime's MaxTimeSeries or MaxHistograms cut the
	// meter's series.
	LimitReached bool `json:"limit_reached,omitempty"`
}

// Get returns the metric name with the given attributes ("key=value"
// each; a metric with more attributes still matches).
func (r *Result) Get(name string, attrs ...string) (Metric, bool) {
next:
	for _, m := range r.Metrics {
		if m.Name != name {
			continue
		}
		for _, kv := range attrs {
			k, v, _ := strings.Cut(kv, "=")
			if m.Attr(k) != v {
				continue next
			}
		}
		return m, true
	}
	return Metric{}, false
}

// Value is Get's value (0, false when absent).
func (r *Result) Value(name string, attrs ...string) (float64, bool) {
	m, ok := r.Get(name, attrs...)
	return m.Value, ok
}

// Result returns a copy of the counters' state. Values the meter reports
// replace the EventCounters mapped to semantic-convention names.
func (a *Analyzer) Result() *Result {
	r := &Result{
		Meter: a.sawMeter, EventCounters: a.sawEC, DroppedSeries: a.dropped, LimitReached: a.limitReached,
		Errors: slices.Clone(a.errors), Metrics: []Metric{},
	}
	// Once the runtime's meter publishes, it is the source of every
	// semantic-convention name, also for instruments that have no series
	// yet (dotnet.exceptions before the first exception): mixing sources
	// would change a series' attributes midway.
	runtimeMeter := false
	for _, s := range a.order {
		if s.kind < mCounter || !s.hasValue {
			continue
		}
		runtimeMeter = runtimeMeter || s.provider == RuntimeMeter
		r.Metrics = append(r.Metrics, a.meterMetric(s))
	}
	var gcCounts [3]*series
	for _, s := range a.order {
		if s.kind >= mCounter || !(s.hasValue || s.hasLast) {
			continue
		}
		mp := (*Mapping)(nil)
		if s.provider == RuntimeSource {
			mp = MappingOf(s.name)
		}
		if mp != nil && runtimeMeter {
			continue
		}
		if mp != nil && mp.Name == "dotnet.gc.collections" {
			gcCounts[s.name[4]-'0'] = s // gen-N-gc-count
			continue
		}
		r.Metrics = append(r.Metrics, ecMetric(s, mp))
	}
	if gcCounts[0] != nil && gcCounts[1] != nil && gcCounts[2] != nil {
		r.Metrics = append(r.Metrics, exclusiveGCCounts(gcCounts)...)
	}
	slices.SortStableFunc(r.Metrics, func(x, y Metric) int {
		if c := strings.Compare(x.Name, y.Name); c != 0 {
			return c
		}
		return strings.Compare(attrText(x.Attributes), attrText(y.Attributes))
	})
	return r
}

func attrText(as []Attribute) string {
	var b strings.Builder
	for _, a := range as {
		b.WriteString(a.Key)
		b.WriteByte('=')
		b.WriteString(a.Value)
		b.WriteByte(',')
	}
	return b.String()
}

func (a *Analyzer) meterMetric(s *series) Metric {
	m := Metric{
		Name: s.name, Unit: s.unit, Value: s.value, IntervalSec: s.interval, UpdatedNanos: s.updated,
		Source: SourceMeter, Provider: s.provider, RuntimeName: s.name, Attributes: parseTags(s.tags),
	}
	in := a.instruments[s.provider+"\x00"+s.name]
	if in != nil {
		m.Description = in.description
	}
	switch s.kind {
	case mCounter:
		m.Kind = KindCounter
		// An observable counter reports the total since the process
		// started; a plain Counter what the session aggregated.
		m.FromStart = s.withTotal && (in == nil || strings.HasPrefix(in.typ, "Observable"))
	case mUpDown:
		m.Kind = KindUpDownCounter
	case mGauge:
		m.Kind = KindGauge
	case mHistogram:
		m.Kind = KindHistogram
		m.Count, m.Sum = s.count, s.hsum
		m.Quantiles = parseQuantiles(utf16String(s.quantiles))
	}
	if sc, ok := semconvs[s.name]; ok && s.provider == RuntimeMeter {
		m.SemConv = true
		m.Kind = sc.kind
		m.FromStart = sc.fromStart && s.withTotal
	}
	if m.Kind == KindCounter && s.hasLast && s.interval > 0 {
		m.Rate, m.HasRate = s.last/s.interval, true
	}
	return m
}

func ecMetric(s *series, mp *Mapping) Metric {
	m := Metric{
		Name: s.name, IntervalSec: s.interval, UpdatedNanos: s.updated,
		Source: SourceEventCounters, Provider: s.provider, RuntimeName: s.name,
	}
	unit, scale := normUnit(s.unit)
	m.Unit = unit
	m.Kind = KindGauge
	if s.kind == ecSum {
		m.Kind = KindCounter
	}
	if mp != nil {
		m.Name, m.SemConv, m.Attributes, m.Kind, m.Unit, scale = mp.Name, true, slices.Clone(mp.Attributes), mp.Kind, mp.Unit, mp.Scale
		m.FromStart = mp.FromStart
	}
	switch {
	case s.kind == ecSum:
		m.Value = s.sum * scale
		if s.hasLast && s.interval > 0 {
			m.Rate, m.HasRate = s.last*scale/s.interval, true
		}
	default:
		m.Value = s.value * scale
	}
	return m
}

// exclusiveGCCounts turns the cumulative gen-N-gc-count increments into
// the convention's exclusive counts: a GC counted once, under the
// generation it collected.
func exclusiveGCCounts(c [3]*series) []Metric {
	var out []Metric
	for g := 0; g < 3; g++ {
		m := ecMetric(c[g], MappingOf(c[g].name))
		sum, last := c[g].sum, c[g].last
		if g < 2 {
			sum -= c[g+1].sum
			last -= c[g+1].last
		}
		m.Value = max(sum, 0)
		if m.HasRate {
			m.Rate = max(last, 0) / c[g].interval
		}
		out = append(out, m)
	}
	return out
}

// parseTags splits a meter's "k=v,k2=v2" tags, renaming the runtime's
// generation key to the convention's.
func parseTags(tags string) []Attribute {
	if tags == "" {
		return nil
	}
	var out []Attribute
	for _, kv := range strings.Split(tags, ",") {
		k, v, _ := strings.Cut(kv, "=")
		if k == runtimeAttrGeneration {
			k = AttrGeneration
		}
		out = append(out, Attribute{k, v})
	}
	return out
}

// parseQuantiles reads "0.5=1.2;0.95=3.4".
func parseQuantiles(s string) []Quantile {
	var out []Quantile
	for _, part := range strings.Split(s, ";") {
		q, v, ok := strings.Cut(part, "=")
		if !ok {
			continue
		}
		qf, err1 := strconv.ParseFloat(q, 64)
		vf, err2 := strconv.ParseFloat(v, 64)
		if err1 == nil && err2 == nil {
			out = append(out, Quantile{qf, vf})
		}
	}
	return out
}

var _ analysis.Counters = (*Analyzer)(nil)

// Read implements analysis.Counters: one Result, the metrics named names
// (without attributes) from it.
func (a *Analyzer) Read(names []string, out []analysis.CounterValue) {
	r := a.Result()
	for i, n := range names {
		m, ok := r.Get(n)
		out[i] = analysis.CounterValue{Value: m.Value, Rate: m.Rate, HasRate: m.HasRate, OK: ok}
	}
}
