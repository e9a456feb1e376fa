package counters

import (
	"fmt"
	"math"
	"strings"
)

// CheckValid reports the first invariant r breaks, nil when it breaks
// none: every metric named, of a known kind and source, once per set of
// attributes; no NaN; a counter's total and rate not negative; quantiles
// in [0, 1] and ascending; no negative interval, time or count. The unit
// tests and the live test run it.
func (r *Result) CheckValid() error {
	if r.DroppedSeries < 0 || len(r.Errors) > 8 {
		return fmt.Errorf("%d series dropped, %d errors", r.DroppedSeries, len(r.Errors))
	}
	seen := map[string]bool{}
	for i := range r.Metrics {
		m := &r.Metrics[i]
		var key strings.Builder
		key.WriteString(m.Name)
		for _, a := range m.Attributes {
			key.WriteString("\x00" + a.Key + "=" + a.Value)
		}
		switch {
		case m.Name == "" || m.Kind < KindGauge || m.Kind > KindHistogram:
			return fmt.Errorf("metric %d: name %q kind %d", i, m.Name, m.Kind)
		case m.Source != SourceMeter && m.Source != SourceEventCounters:
			return fmt.Errorf("%s: source %q", m.Name, m.Source)
		case seen[key.String()]:
			return fmt.Errorf("%s %v: listed twice", m.Name, m.Attributes)
		case math.IsNaN(m.Value) || math.IsNaN(m.Rate) || math.IsNaN(m.Sum):
			return fmt.Errorf("%s: value %v rate %v sum %v", m.Name, m.Value, m.Rate, m.Sum)
		case m.Kind == KindCounter && (m.Value < 0 || m.Rate < 0):
			return fmt.Errorf("counter %s %v: total %v, rate %v", m.Name, m.Attributes, m.Value, m.Rate)
		case m.IntervalSec < 0 || m.UpdatedNanos < 0 || m.Count < 0:
			return fmt.Errorf("%s: interval %v s, updated at %d ns, count %v", m.Name, m.IntervalSec, m.UpdatedNanos, m.Count)
		}
		seen[key.String()] = true
		for j, q := range m.Quantiles {
			if q.Quantile < 0 || q.Quantile > 1 || j > 0 && q.Quantile < m.Quantiles[j-1].Quantile {
				return fmt.Errorf("%s: quantiles %v", m.Name, m.Quantiles)
			}
		}
	}
	return nil
}
