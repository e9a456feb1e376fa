//go:build compat

package heap

import (
	"encoding/json"
	"testing"

	"github.com/clrspy/clrspy/internal/tracetest"
)

// movementTraces are the real traces with GCBulkMoved/SurvivingObjectRanges.
var movementTraces = []string{
	"perfview__eventpipe-dotnetcore3.0-win-x64-objver4.nettrace",
	"diagnostics__trace.nettrace",
	"filtrace__contention.nettrace",
	"filtrace__wait.nettrace",
	"filtrace__threadpool.nettrace",
	"filtrace__exceptions.nettrace",
	"filtrace__activity.nettrace",
	"RememberCalendar__trace.nettrace",
}

// TestRealTraces replays every real trace with movement events: none may
// show a contradiction, and the counts of remapped and dead sampled objects
// are kept in testdata/real_traces.golden.json.
func TestRealTraces(t *testing.T) {
	got := map[string]summary{}
	for _, name := range movementTraces {
		r := replay(t, tracetest.CompatPath(t, name))
		s := summarize(r)
		got[name] = s
		if s.Contradictions.Total() != 0 {
			t.Errorf("%s: contradictions %+v", name, s.Contradictions)
		}
		if s.DecodeErrors != 0 {
			t.Errorf("%s: %d decode errors, first: %s", name, s.DecodeErrors, r.Stats.FirstDecodeError)
		}
	}
	b, _ := json.MarshalIndent(got, "", "  ")
	tracetest.Golden(t, "real_traces.golden.json", append(b, '\n'))
}
