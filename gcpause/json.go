package gcpause

import (
	"encoding/json"
	"math"

	"github.com/clrspy/clrspy/clrevents"
)

// reasonJSON is ReasonRollup's JSON form, the one row type of the
// suspensions by reason that clrspy gc --json's summary, the HTML page and
// the live monitor's snapshot write: the reason by name and code, times
// in milliseconds. The keys and their order are those documents' and must
// not change.
type reasonJSON struct {
	Reason         string  `json:"reason"`
	Code           uint32  `json:"code"`
	Count          int     `json:"count"`
	Incomplete     int     `json:"incomplete"`
	TotalMS        float64 `json:"total_ms"`
	MaxMS          float64 `json:"max_ms"`
	TotalSuspendMS float64 `json:"total_suspend_ms"`
	MaxSuspendMS   float64 `json:"max_suspend_ms"`
}

// MarshalJSON writes the rollup in milliseconds (nanoseconds / 1e6,
// unrounded, as report's other times).
func (r ReasonRollup) MarshalJSON() ([]byte, error) {
	return json.Marshal(reasonJSON{
		Reason: r.Reason.String(), Code: uint32(r.Reason), Count: r.Count, Incomplete: r.Incomplete,
		TotalMS: msOf(r.TotalNanos), MaxMS: msOf(r.MaxNanos),
		TotalSuspendMS: msOf(r.TotalSuspend), MaxSuspendMS: msOf(r.MaxSuspend),
	})
}

// UnmarshalJSON reads what MarshalJSON writes (a saved snapshot read
// back); the reason is its code, the name is for people.
func (r *ReasonRollup) UnmarshalJSON(b []byte) error {
	var j reasonJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*r = ReasonRollup{Reason: clrevents.SuspendReason(j.Code), Count: j.Count, Incomplete: j.Incomplete,
		TotalNanos: nsOf(j.TotalMS), MaxNanos: nsOf(j.MaxMS), TotalSuspend: nsOf(j.TotalSuspendMS), MaxSuspend: nsOf(j.MaxSuspendMS)}
	return nil
}

func msOf(ns int64) float64 { return float64(ns) / 1e6 }

func nsOf(ms float64) int64 { return int64(math.Round(ms * 1e6)) }
