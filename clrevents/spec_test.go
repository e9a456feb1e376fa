package clrevents

import (
	"errors"
	"testing"

	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/nettrace"
)

func TestNewer(t *testing.T) {
	for _, tc := range []struct {
		p           nettrace.ProviderKind
		id, version uint32
		known       uint32
		newer       bool
	}{
		{nettrace.Runtime, IDGCStart, 2, 2, false},
		{nettrace.Runtime, IDGCStart, 3, 2, true},
		{nettrace.Runtime, IDGCAllocationTick, 4, 4, false},
		{nettrace.Runtime, IDContentionStart, 2, 2, false},
		{nettrace.Runtime, IDGCGlobalHeapHistory, 5, 4, true},
		{nettrace.Rundown, IDRundownMethodDCEndVerbose, 2, 2, false},
		{nettrace.SampleProfiler, IDThreadSample, 1, 0, true},
		{nettrace.Runtime, IDGCCreateSegment, 9, 0, false}, // named, not decoded
		{nettrace.NotRuntime, IDGCStart, 9, 0, false},
	} {
		known, newer := Newer(tc.p, tc.id, tc.version)
		if known != tc.known || newer != tc.newer {
			t.Errorf("Newer(%v, %d, v%d) = v%d, %v; want v%d, %v", tc.p, tc.id, tc.version, known, newer, tc.known, tc.newer)
		}
	}
}

// Every decoded event of the fixtures (.NET 10, recorded by clrspy) is of
// a version the table's decoder reads: the table's versions are at least
// what the runtime writes today. decoded counts that the check saw events.
func TestFixtureVersionsKnown(t *testing.T) {
	decoded := 0
	for _, name := range tracetest.Fixtures(t) {
		r := tracetest.Open(t, name, nettrace.NewReader)
		err := tracetest.ReadAll(t, r, func(ev *nettrace.Event) {
			m := ev.Meta
			if v, ok := Lookup(m.Runtime, m.EventID).Version(); ok {
				decoded++
				if m.Version > v {
					t.Errorf("%s: %s v%d, the decoder reads v%d", name, m.Name, m.Version, v)
				}
			}
		})
		if err != nil && !errors.Is(err, nettrace.ErrTruncated) {
			t.Fatal(name, err)
		}
	}
	if decoded != 40_203 {
		t.Fatalf("%d decoded events in the fixtures: want 40,203 (the fixtures changed?)", decoded)
	}
}
