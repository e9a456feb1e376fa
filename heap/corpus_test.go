//go:build compat

package heap

import (
	"testing"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/internal/fuzzcorpus"
	"github.com/clrspy/clrspy/internal/fuzzcorpus/realtrace"
)

// TestFuzzCorpus keeps FuzzTracker's checked-in seeds in step with the real
// traces: the first payloads of every event kind the tracker handles.
func TestFuzzCorpus(t *testing.T) {
	// The order of FuzzTracker's ids.
	ids := []uint32{clrevents.IDGCStart, clrevents.IDGCBulkMovedObjectRanges, clrevents.IDGCAllocationTick,
		clrevents.IDGCBulkSurvivingObjectRanges, clrevents.IDGCGenerationRange, clrevents.IDBulkType,
		clrevents.IDAllocationSampled, clrevents.IDGCSampledObjectAllocHigh, clrevents.IDGCEnd, clrevents.IDGCRestartEEEnd}
	var seeds []fuzzcorpus.Seed
	for i, id := range ids {
		for _, e := range realtrace.Runtime(t, 3, id) {
			seeds = append(seeds, fuzzcorpus.Seed{Label: e.Label(), Args: []any{uint8(i), e.Payload, e.Version}})
		}
	}
	fuzzcorpus.Check(t, "FuzzTracker", seeds)
}
