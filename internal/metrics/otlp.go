package metrics

import (
	"context"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/internal/fleet"
)

// Producer is an OpenTelemetry metric producer over a fleet: the same
// families as the Prometheus collector, under their OpenTelemetry names,
// units and attribute keys, as cumulative sums, gauges and explicit-bucket
// histograms.
type Producer struct {
	src   targetSource
	start time.Time
}

// NewProducer returns a producer of f; series start at start.
func NewProducer(f *fleet.Fleet, start time.Time) *Producer {
	return &Producer{src: fleetSource{f}, start: start}
}

// Produce implements sdkmetric.Producer.
func (p *Producer) Produce(context.Context) ([]metricdata.ScopeMetrics, error) {
	s := &otelSink{now: time.Now(), start: p.start, byFamily: make(map[*Family]*metricdata.Metrics)}
	walk(p.src, s)
	sm := metricdata.ScopeMetrics{Scope: instrumentation.Scope{Name: "github.com/clrspy/clrspy/metrics"}}
	for _, f := range s.order {
		sm.Metrics = append(sm.Metrics, *s.byFamily[f])
	}
	return []metricdata.ScopeMetrics{sm}, nil
}

type otelSink struct {
	now, start time.Time
	byFamily   map[*Family]*metricdata.Metrics
	order      []*Family
}

func (s *otelSink) metric(f *Family) *metricdata.Metrics {
	m := s.byFamily[f]
	if m == nil {
		m = &metricdata.Metrics{Name: f.OTel, Description: f.Help, Unit: f.OTelUnit}
		switch f.Kind {
		case Counter:
			m.Data = metricdata.Sum[float64]{Temporality: metricdata.CumulativeTemporality, IsMonotonic: true}
		case Gauge:
			m.Data = metricdata.Gauge[float64]{}
		case Histogram:
			m.Data = metricdata.Histogram[float64]{Temporality: metricdata.CumulativeTemporality}
		}
		s.byFamily[f] = m
		s.order = append(s.order, f)
	}
	return m
}

func attrs(f *Family, lv []string) attribute.Set {
	kv := make([]attribute.KeyValue, 0, len(lv))
	for i, v := range lv {
		l := f.Labels[i]
		if l == LabelPid {
			if n, err := strconv.Atoi(v); err == nil {
				kv = append(kv, attribute.Int(l.OTel, n))
				continue
			}
		}
		kv = append(kv, attribute.String(l.OTel, v))
	}
	return attribute.NewSet(kv...)
}

func (s *otelSink) value(f *Family, v float64, lv []string) {
	if len(lv) != len(f.Labels) {
		return
	}
	m := s.metric(f)
	dp := metricdata.DataPoint[float64]{Attributes: attrs(f, lv), Time: s.now, Value: v}
	switch d := m.Data.(type) {
	case metricdata.Sum[float64]:
		dp.StartTime = s.start
		d.DataPoints = append(d.DataPoints, dp)
		m.Data = d
	case metricdata.Gauge[float64]:
		d.DataPoints = append(d.DataPoints, dp)
		m.Data = d
	}
}

func (s *otelSink) hist(f *Family, h analysis.Histogram, _ *Native, lv []string) {
	if len(lv) != len(f.Labels) {
		return
	}
	m := s.metric(f)
	d, ok := m.Data.(metricdata.Histogram[float64])
	if !ok {
		return
	}
	bounds, sum := seconds(&h)
	d.DataPoints = append(d.DataPoints, metricdata.HistogramDataPoint[float64]{
		Attributes: attrs(f, lv), StartTime: s.start, Time: s.now,
		Count: h.Count, Bounds: bounds, BucketCounts: h.Counts, Sum: sum,
	})
	m.Data = d
}

// OTLP pushes a fleet's metrics to an OTLP/HTTP endpoint.
type OTLP struct {
	provider *sdkmetric.MeterProvider
}

// StartOTLP starts pushing f's metrics to endpoint (a URL such as
// http://collector:4318; its path defaults to /v1/metrics) every
// interval. Labels become resource attributes.
func StartOTLP(ctx context.Context, endpoint string, f *fleet.Fleet, interval time.Duration, labels map[string]string) (*OTLP, error) {
	return startOTLP(ctx, endpoint, fleetSource{f}, interval, labels)
}

func startOTLP(ctx context.Context, endpoint string, src targetSource, interval time.Duration, labels map[string]string) (*OTLP, error) {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--otlp-endpoint %q: want an http:// or https:// URL", endpoint)
	}
	opts := []otlpmetrichttp.Option{otlpmetrichttp.WithEndpointURL(endpoint)}
	if u.Path == "" || u.Path == "/" {
		opts = append(opts, otlpmetrichttp.WithURLPath("/v1/metrics"))
	}
	exp, err := otlpmetrichttp.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("--otlp-endpoint %s: %w", endpoint, err)
	}
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	kv := []attribute.KeyValue{attribute.String("service.name", "clrspy")}
	for _, k := range keys {
		kv = append(kv, attribute.String(k, labels[k]))
	}
	reader := sdkmetric.NewPeriodicReader(exp, sdkmetric.WithInterval(interval),
		sdkmetric.WithProducer(&Producer{src: src, start: time.Now()}))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader),
		sdkmetric.WithResource(resource.NewSchemaless(kv...)))
	return &OTLP{provider: mp}, nil
}

// Flush pushes now.
func (o *OTLP) Flush(ctx context.Context) error { return o.provider.ForceFlush(ctx) }

// Shutdown pushes a last time and stops.
func (o *OTLP) Shutdown(ctx context.Context) error { return o.provider.Shutdown(ctx) }
