//go:build compat

package exceptions

import (
	"testing"

	"github.com/clrspy/clrspy/internal/tracetest"
)

// TestExceptionsEqualTraceEventCompat holds the claim on the filtrace
// exceptions trace (.NET 10, Windows, BenchmarkDotNet): 2,000 exceptions,
// each with its catch, catch stop and dispatch end (8,000 events), every
// decoded field equal to TraceEvent's, the counts per type (1,333
// InvalidOperationException, 667 ArgumentException) and catch site too.
func TestExceptionsEqualTraceEventCompat(t *testing.T) {
	res := equalTraceEvent(t, tracetest.CompatPath(t, "filtrace__exceptions.nettrace"))
	if res.Thrown != 2000 || res.Caught != 2000 || res.Uncaught != 0 || res.Open != 0 || len(res.Types) != 2 ||
		res.Types[0].Count != 1333 || res.Types[1].Count != 667 {
		t.Errorf("thrown %d caught %d uncaught %d open %d types %d", res.Thrown, res.Caught, res.Uncaught, res.Open, len(res.Types))
	}
}
