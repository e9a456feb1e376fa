package metrics

import (
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/clrspy/clrspy/internal/fleet"
)

// Options configure the registry.
type Options struct {
	// Labels are constant labels added to every series (--label k=v).
	Labels map[string]string
	// Self adds the exporter's own process and Go runtime metrics
	// (process_*, go_*), which carry the Labels too.
	Self bool
}

var labelName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// reserved are the label names the families use themselves.
func reserved() map[string]bool {
	r := map[string]bool{"le": true, "quantile": true}
	for _, f := range allFamilies() {
		for _, l := range f.Labels {
			r[l.Prom] = true
		}
	}
	return r
}

// ParseLabel reads one --label value, "name=value".
func ParseLabel(s string, into map[string]string) error {
	k, v, ok := strings.Cut(s, "=")
	switch {
	case !ok:
		return fmt.Errorf("--label %q: want name=value", s)
	case !labelName.MatchString(k) || strings.HasPrefix(k, "__"):
		return fmt.Errorf("--label %q: %q is not a valid Prometheus label name", s, k)
	case reserved()[k]:
		return fmt.Errorf("--label %q: %s is a label clrspy sets itself", s, k)
	}
	if _, dup := into[k]; dup {
		return fmt.Errorf("--label %q: %s given twice", s, k)
	}
	into[k] = v
	return nil
}

// NewRegistry returns a registry holding the collector of f.
func NewRegistry(f *fleet.Fleet, o Options) (*prometheus.Registry, error) {
	return newRegistry(fleetSource{f}, o)
}

func newRegistry(src targetSource, o Options) (*prometheus.Registry, error) {
	reg := prometheus.NewRegistry()
	r := prometheus.WrapRegistererWith(prometheus.Labels(o.Labels), reg)
	if err := r.Register(&Collector{src: src}); err != nil {
		return nil, err
	}
	if o.Self {
		if err := r.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})); err != nil {
			return nil, err
		}
		if err := r.Register(collectors.NewGoCollector()); err != nil {
			return nil, err
		}
	}
	return reg, nil
}

// Handler serves reg at /metrics: Prometheus text, OpenMetrics or
// protobuf (with native histograms) as the scraper asks.
func Handler(reg *prometheus.Registry) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		EnableOpenMetrics: true,
		// A scrape that fails in part still returns what it could.
		ErrorHandling: promhttp.ContinueOnError,
	})
}

// Names lists every family's Prometheus name, sorted (for documentation
// and the dashboard test).
func Names() []string {
	var out []string
	for _, f := range allFamilies() {
		out = append(out, f.Name)
	}
	sort.Strings(out)
	return out
}
