package metrics

import "testing"

// TestGCTotalsExact: the GC totals of the golden targets, every series
// exactly (testutil.GatherAndCompare): the workstation fixture's 27/8/5
// GCs, the locks target's runtime counts before the session (12/3/1; the
// counters' 999 gen0 must not leak in), and its 40 ms pause before.
func TestGCTotalsExact(t *testing.T) {
	reg, err := newRegistry(goldenSource(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	compare(t, reg, exposition(famCollections, "counter",
		`dotnet_gc_collections_total{dotnet_gc_heap_generation="gen0",pid="101",process="Workload"} 27`,
		`dotnet_gc_collections_total{dotnet_gc_heap_generation="gen0",pid="202",process="Locks"} 12`,
		`dotnet_gc_collections_total{dotnet_gc_heap_generation="gen1",pid="101",process="Workload"} 8`,
		`dotnet_gc_collections_total{dotnet_gc_heap_generation="gen1",pid="202",process="Locks"} 3`,
		`dotnet_gc_collections_total{dotnet_gc_heap_generation="gen2",pid="101",process="Workload"} 5`,
		`dotnet_gc_collections_total{dotnet_gc_heap_generation="gen2",pid="202",process="Locks"} 1`,
	)+exposition(famPauseTime, "counter",
		`dotnet_gc_pause_time_seconds_total{pid="101",process="Workload"} 0.092755719`,
		`dotnet_gc_pause_time_seconds_total{pid="202",process="Locks"} 0.04`,
	), famCollections.Name, famPauseTime.Name)
}
