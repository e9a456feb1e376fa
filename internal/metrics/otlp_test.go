package metrics

import (
	"context"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	colmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	mpb "go.opentelemetry.io/proto/otlp/metrics/v1"
	"google.golang.org/protobuf/proto"
)

// TestOTLP: the push reaches an OTLP/HTTP receiver with the OpenTelemetry
// names, units and attributes, the labels as resource attributes.
func TestOTLP(t *testing.T) {
	var mu sync.Mutex
	var got []*colmetrics.ExportMetricsServiceRequest
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.URL.Path != "/v1/metrics" || r.Header.Get("Content-Type") != "application/x-protobuf" {
			t.Errorf("request %s %s", r.URL.Path, r.Header.Get("Content-Type"))
		}
		req := &colmetrics.ExportMetricsServiceRequest{}
		if err := proto.Unmarshal(b, req); err != nil {
			t.Errorf("body: %v", err)
		}
		mu.Lock()
		got = append(got, req)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(nil)
	}))
	defer srv.Close()
	ctx := context.Background()
	o, err := startOTLP(ctx, srv.URL, goldenSource(t), time.Hour, map[string]string{"cluster": "test"})
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	o.Shutdown(ctx)
	mu.Lock()
	defer mu.Unlock()
	if len(got) == 0 {
		t.Fatal("nothing pushed")
	}
	rm := got[0].ResourceMetrics[0]
	res := map[string]string{}
	for _, a := range rm.Resource.Attributes {
		res[a.Key] = a.Value.GetStringValue()
	}
	if res["cluster"] != "test" || res["service.name"] != "clrspy" {
		t.Errorf("resource %v", res)
	}
	byName := map[string]*mpb.Metric{}
	for _, m := range rm.ScopeMetrics[0].Metrics {
		byName[m.Name] = m
	}
	c := byName["dotnet.gc.collections"]
	if c == nil || c.Unit != "{collection}" || !c.GetSum().GetIsMonotonic() {
		t.Fatalf("dotnet.gc.collections: %v", c)
	}
	n := 0
	for _, dp := range c.GetSum().DataPoints {
		var pid int64
		var gen string
		for _, a := range dp.Attributes {
			switch a.Key {
			case "process.pid":
				pid = a.Value.GetIntValue()
			case "dotnet.gc.heap.generation":
				gen = a.Value.GetStringValue()
			}
		}
		if pid == 101 && gen == "gen1" {
			n++
			if dp.GetAsDouble() != 8 {
				t.Errorf("gen1 GCs of pid 101: %v", dp.GetAsDouble())
			}
		}
	}
	if n != 1 {
		t.Errorf("%d gen1 points for pid 101", n)
	}
	p := byName["clrspy.gc.pause"]
	if p == nil || p.Unit != "s" || len(p.GetHistogram().DataPoints) != 4 {
		t.Fatalf("clrspy.gc.pause: %v", p)
	}
	var sum float64
	for _, dp := range p.GetHistogram().DataPoints {
		sum += dp.GetSum()
		if len(dp.BucketCounts) != len(dp.ExplicitBounds)+1 {
			t.Errorf("%d buckets for %d bounds", len(dp.BucketCounts), len(dp.ExplicitBounds))
		}
	}
	if math.Abs(sum-0.092485) > 1e-6 {
		t.Errorf("pause sum %v", sum)
	}
	if byName["dotnet.exceptions"] == nil || byName["clrspy.target.up"] == nil || byName["clrspy.attach.errors"] == nil {
		t.Errorf("families missing: %v", len(byName))
	}
	if _, err := startOTLP(ctx, "collector:4318", goldenSource(t), time.Second, nil); err == nil || err.Error() != `--otlp-endpoint "collector:4318": want an http:// or https:// URL` {
		t.Errorf("bad endpoint: %v", err)
	}
}
