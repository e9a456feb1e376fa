package metrics

import (
	"testing"

	"github.com/clrspy/clrspy/internal/monitor"
)

// TestExceptionSites: serve --exceptions' throw sites are one series per
// (type, site) of the monitor's bounded summary, a type without sites (the
// [other types] entry) one series under [other sites].
func TestExceptionSites(t *testing.T) {
	snap := &monitor.Snapshot{Exceptions: &monitor.ExceptionsSummary{Thrown: 9, Types: []monitor.ExceptionTypeSummary{
		{Type: "System.InvalidOperationException", Count: 7, ThrowSites: []monitor.ExceptionSiteCount{
			{Site: "Shop.Orders.Lookup(int32)", Count: 5}, {Site: "[other sites]", Count: 2}}},
		{Type: "[other types]", Count: 2},
	}}}
	src := &fakeSource{ts: []Target{{Pid: "7", Process: "Shop", Up: true, Snapshot: snap}}}
	reg, err := newRegistry(src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	compare(t, reg, exposition(famExceptionSites, "counter",
		`clrspy_exceptions_thrown_total{error_type="System.InvalidOperationException",pid="7",process="Shop",throw_site="Shop.Orders.Lookup(int32)"} 5`,
		`clrspy_exceptions_thrown_total{error_type="System.InvalidOperationException",pid="7",process="Shop",throw_site="[other sites]"} 2`,
		`clrspy_exceptions_thrown_total{error_type="[other types]",pid="7",process="Shop",throw_site="[other sites]"} 2`,
	), famExceptionSites.Name)
}
