package metrics

import (
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/proto"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/internal/fleet"
)

// Collector is a prometheus.Collector over a fleet: every scrape walks
// its targets, so a target the fleet drops has no series left.
type Collector struct {
	src targetSource
}

// NewCollector returns a collector of f.
func NewCollector(f *fleet.Fleet) *Collector { return &Collector{src: fleetSource{f}} }

// Describe sends every family's descriptor.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, f := range allFamilies() {
		ch <- f.desc
	}
}

// Collect sends the source's current samples.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	walk(c.src, &promSink{ch: ch, seen: make(map[string]bool)})
}

type promSink struct {
	ch   chan<- prometheus.Metric
	seen map[string]bool
	key  strings.Builder
}

// fresh reports whether (f, lv) was not sent yet in this scrape (two
// targets with the same labels would make the scrape fail) and makes the
// label values valid UTF-8.
func (s *promSink) fresh(f *Family, lv []string) bool {
	s.key.Reset()
	s.key.WriteString(f.Name)
	for i, v := range lv {
		if !utf8.ValidString(v) {
			lv[i] = strings.ToValidUTF8(v, "\uFFFD")
		}
		s.key.WriteByte(0)
		s.key.WriteString(lv[i])
	}
	k := s.key.String()
	if s.seen[k] {
		return false
	}
	s.seen[k] = true
	return true
}

func (s *promSink) value(f *Family, v float64, lv []string) {
	if !s.fresh(f, lv) {
		return
	}
	t := prometheus.GaugeValue
	if f.Kind == Counter {
		t = prometheus.CounterValue
	}
	if m, err := prometheus.NewConstMetric(f.desc, t, v, lv...); err == nil {
		s.ch <- m
	}
}

func (s *promSink) hist(f *Family, h analysis.Histogram, n *Native, lv []string) {
	if !s.fresh(f, lv) || len(lv) != len(f.Labels) {
		return
	}
	s.ch <- newHistMetric(f.desc, &h, n, prometheus.MakeLabelPairs(f.desc, lv))
}

// histMetric is a histogram with classic buckets and, when there is
// one, a native histogram in the same sample (client_golang's const
// histograms carry one or the other). The text formats show the classic
// buckets; the protobuf format carries both.
type histMetric struct {
	desc   *prometheus.Desc
	labels []*dto.LabelPair
	h      dto.Histogram
}

func newHistMetric(desc *prometheus.Desc, h *analysis.Histogram, n *Native, labels []*dto.LabelPair) *histMetric {
	m := &histMetric{desc: desc, labels: labels}
	bounds, sum := seconds(h)
	m.h.SampleCount = proto.Uint64(h.Count)
	m.h.SampleSum = proto.Float64(sum)
	var cum uint64
	m.h.Bucket = make([]*dto.Bucket, len(bounds))
	for i, b := range bounds {
		cum += h.Counts[i]
		m.h.Bucket[i] = &dto.Bucket{UpperBound: proto.Float64(b), CumulativeCount: proto.Uint64(cum)}
	}
	if n != nil {
		m.h.Schema = proto.Int32(n.Schema)
		m.h.ZeroThreshold = proto.Float64(n.ZeroThreshold)
		m.h.ZeroCount = proto.Uint64(n.Zero)
		m.h.PositiveSpan, m.h.PositiveDelta = spans(n.Buckets)
		if len(m.h.PositiveSpan) == 0 && n.Zero == 0 {
			// An empty native histogram still says it is one.
			m.h.PositiveSpan = []*dto.BucketSpan{{Offset: proto.Int32(0), Length: proto.Uint32(0)}}
		}
	}
	return m
}

func (m *histMetric) Desc() *prometheus.Desc { return m.desc }

func (m *histMetric) Write(out *dto.Metric) error {
	out.Label = m.labels
	out.Histogram = &m.h
	return nil
}

// spans encodes sparse buckets as native-histogram spans and deltas: runs
// of consecutive indexes (gaps of one or two empty buckets are filled in,
// cheaper than a new span), each count as the difference from the
// previous one.
func spans(buckets map[int]int64) ([]*dto.BucketSpan, []int64) {
	if len(buckets) == 0 {
		return nil, nil
	}
	keys := make([]int, 0, len(buckets))
	for k := range buckets {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	var sp []*dto.BucketSpan
	var deltas []int64
	var prev int64
	next := 0
	push := func(c int64) {
		*sp[len(sp)-1].Length++
		deltas = append(deltas, c-prev)
		prev = c
	}
	for i, k := range keys {
		gap := k - next
		if i == 0 || gap > 2 {
			sp = append(sp, &dto.BucketSpan{Offset: proto.Int32(int32(gap)), Length: proto.Uint32(0)})
		} else {
			for j := 0; j < gap; j++ {
				push(0)
			}
		}
		push(buckets[k])
		next = k + 1
	}
	return sp, deltas
}
