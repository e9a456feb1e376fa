package main

import (
	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/ipc"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/source"
)

// movementTraceNote is printed when a trace file holds the movement
// keyword's events: its pauses were measured with the keyword on.
const movementTraceNote = "note: this trace was recorded with the GC survival and movement keyword on: the runtime reported every surviving/moved range, which made each GC pause longer than it is without the keyword (docs/PERFORMANCE.md)"

// movementOn reports whether a session with these providers turns the
// GC survival and movement keyword on.
func movementOn(ps []ipc.Provider) bool {
	for _, p := range ps {
		if p.Name == nettrace.ProviderRuntime && p.Keywords&ipc.KeywordGCSurvivalAndMovement != 0 {
			return true
		}
	}
	return false
}

// noteMovementLive prints movementNote when a live session turns the
// keyword on (call it once the session is open).
func noteMovementLive(st *source.Stream, ps []ipc.Provider) {
	if st.Live() && movementOn(ps) {
		notice(movementNote)
	}
}

// noteMovementFile prints movementTraceNote when a trace file read to its
// end holds the keyword's events (the reader defines an event's metadata
// before its first occurrence, whatever Keep skips).
func noteMovementFile(st *source.Stream) {
	if st.Live() {
		return
	}
	for _, m := range st.Reader().Metadata() {
		if m.Runtime == nettrace.Runtime && (m.EventID == clrevents.IDGCBulkSurvivingObjectRanges || m.EventID == clrevents.IDGCBulkMovedObjectRanges) {
			notice(movementTraceNote)
			return
		}
	}
}
