//go:build compat

package locks

import (
	"testing"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/internal/fuzzcorpus"
	"github.com/clrspy/clrspy/internal/fuzzcorpus/realtrace"
)

// TestFuzzCorpus keeps FuzzAnalyzer's checked-in seeds in step with the
// real traces: the first payloads of every event kind the analysis reads.
func TestFuzzCorpus(t *testing.T) {
	// The order of FuzzAnalyzer's ids.
	ids := []uint32{clrevents.IDContentionStart, clrevents.IDContentionStop, clrevents.IDThreadCreated,
		clrevents.IDContentionLockCreated, clrevents.IDBulkType, clrevents.IDGCAllocationTick, clrevents.IDAllocationSampled}
	var seeds []fuzzcorpus.Seed
	for i, id := range ids {
		for _, e := range realtrace.Runtime(t, 3, id) {
			seeds = append(seeds, fuzzcorpus.Seed{Label: e.Label(), Args: []any{e.Payload, uint8(i), e.Version}})
		}
	}
	fuzzcorpus.Check(t, "FuzzAnalyzer", seeds)
}
