package requests

import (
	"math"
	"testing"
)

func TestRoute(t *testing.T) {
	for in, want := range map[string]string{
		"":                   "/",
		"/":                  "/",
		"/alloc/1":           "/alloc/{n}",
		"/orders/42/items/7": "/orders/{n}/items/{n}",
		"/u/7f3a9c21?x=1":    "/u/{id}",
		"/o/3f2504e0-4f89-11d3-9a0c-0305e82c3301": "/o/{guid}",
		"/v2/api":       "/v2/api",
		"/users/ab1234": "/users/{id}",
		"/health":       "/health",
	} {
		if got := Route(in); got != want {
			t.Errorf("Route(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestSketch: quantiles within 1 % of the exact ones, the maximum exact.
func TestSketch(t *testing.T) {
	var s sketch
	for v := int64(1); v <= 100000; v++ {
		s.add(v * 1000)
	}
	for _, q := range []float64{0.5, 0.9, 0.99, 0.999} {
		exact := q * 100000 * 1000
		if got := float64(s.quantile(q)); math.Abs(got-exact)/exact > 0.01 {
			t.Errorf("q%.3f = %.0f, exact %.0f", q, got, exact)
		}
	}
	if s.max != 100000*1000 || s.quantile(1) != s.max {
		t.Errorf("max %d, q1 %d", s.max, s.quantile(1))
	}
	var e sketch
	if e.quantile(0.5) != 0 {
		t.Error("empty sketch")
	}
}
