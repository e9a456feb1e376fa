package gcpause

import (
	"math"
	"strconv"
	"time"

	"github.com/clrspy/clrspy/clrevents"
)

// Opt is a figure the events may not have carried: negative (-1) is
// unknown, written as null in JSON (the analysis' "-1 = unknown", kept a
// comparable value so rows compare with == and reflect.DeepEqual).
type Opt float64

// Unknown is the absent value.
const Unknown Opt = -1

// OptOf is v rounded to 6 decimals (ms to the ns, MB to the byte), or
// Unknown for a negative or NaN value.
func OptOf(v float64) Opt {
	if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return Unknown
	}
	return Opt(round6(v))
}

// Valid reports whether the value is known.
func (o Opt) Valid() bool { return o >= 0 }

// Or is the value, or def when unknown.
func (o Opt) Or(def float64) float64 {
	if o.Valid() {
		return float64(o)
	}
	return def
}

// MarshalJSON writes the number as encoding/json writes a float64, or null.
func (o Opt) MarshalJSON() ([]byte, error) {
	if !o.Valid() {
		return []byte("null"), nil
	}
	return appendJSONFloat(nil, float64(o)), nil
}

// UnmarshalJSON reads a number or null.
func (o *Opt) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*o = Unknown
		return nil
	}
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return err
	}
	*o = Opt(v)
	return nil
}

// appendJSONFloat is encoding/json's float64 form ('f', or 'e' for very
// small and very large magnitudes, with e-07 as e-7).
func appendJSONFloat(b []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }

// GCRow is one GC as every surface shows it: clrspy gc --json's rows, the
// report page's (report.GCColumns holds them as columns), the live
// monitor's snapshot (top, serve's web view, metrics, triage's live facts).
// Times are milliseconds since the session start, sizes decimal MB (as
// PerfView's), each value rounded to 6 decimals except the times; values
// the events did not carry are Unknown (null). Type and Reason are the
// runtime's codes, written by name.
type GCRow struct {
	Index      int    `json:"index"`  // 0-based position in the session
	Number     uint32 `json:"number"` // the runtime's GC count
	Generation int    `json:"generation"`
	// Gen is PerfView's Gen column (GC.GenerationName): 0N, 2B, 1NI...
	Gen      string             `json:"gen"`
	Type     clrevents.GCType   `json:"type"`
	Reason   clrevents.GCReason `json:"reason"`
	Induced  bool               `json:"induced"`
	Complete bool               `json:"complete"`
	// StartSeen is false for a GC whose pause began before the session:
	// its pauses are lower bounds, left out of maxima and histograms.
	StartSeen bool `json:"start_seen"`
	// PauseStartMS and PauseStartUTC are the pause's start
	// (SuspendEEBegin); GCStartMS the GCStart, PauseEndMS the last
	// RestartEEEnd.
	PauseStartMS  float64   `json:"pause_start_ms"`
	PauseStartUTC time.Time `json:"pause_start_utc"`
	GCStartMS     float64   `json:"gc_start_ms"`
	PauseEndMS    float64   `json:"pause_end_ms"`
	SuspendMS     float64   `json:"suspend_ms"` // time to suspend the threads
	// PauseMS is PerfView's pause: SuspendEEBegin to RestartEEEnd (a
	// background GC's stops summed); PauseRuntimeMS the runtime's own
	// (GC.GetTotalPauseDuration, GC.PauseRuntimeNanos).
	PauseMS        float64 `json:"pause_ms"`
	PauseRuntimeMS Opt     `json:"pause_runtime_ms"`
	Pauses         int     `json:"pauses"`         // stops (a background GC makes several)
	GCDurationMS   Opt     `json:"gc_duration_ms"` // GCStart → GCEnd
	// PausePercent is the pause as a share of the time since the
	// previous GC's pause ended.
	PausePercent float64 `json:"pause_time_percent"`
	Gen0AllocMB  Opt     `json:"gen0_alloc_mb"` // allocated in gen0 since the previous GC
	PeakMB       Opt     `json:"peak_mb"`       // heap size when the GC started
	AfterMB      Opt     `json:"after_mb"`      // heap size after, fragmentation included
	PromotedMB   Opt     `json:"promoted_mb"`
	// GenSizeMB, SurvivalPercent and FragPercent are per generation: gen0,
	// gen1, gen2, LOH, POH.
	GenSizeMB       [5]Opt `json:"gen_size_mb"`
	SurvivalPercent [5]Opt `json:"survival_percent"`
	FragPercent     [5]Opt `json:"fragmentation_percent"`
	PinnedObjects   Opt    `json:"pinned_objects"`
	FinalizeSurvMB  Opt    `json:"finalize_survived_mb"` // finalization-promoted
	Heaps           int    `json:"heaps,omitempty"`
	NoSuspension    bool   `json:"no_suspension,omitempty"`
	MissingSuspEnd  bool   `json:"missing_suspend_end,omitempty"`
	LostEvents      bool   `json:"lost_events,omitempty"`
	// RequestsHit is the requests in flight the GC's pause froze (package
	// requests' GC damage), set by clrspy gc when the trace has request
	// events.
	RequestsHit *int64 `json:"requests_hit,omitempty"`
}

// NewGCRow is g's row. It does not allocate.
func NewGCRow(g *GC) GCRow {
	r := GCRow{
		Index: g.Index, Number: g.Number, Generation: g.Generation, Gen: g.GenerationName(),
		Type: g.Type, Reason: g.Reason, Induced: g.Induced, Complete: g.Complete, StartSeen: g.StartSeen,
		PauseStartMS: msOf(g.PauseStartNanos), PauseStartUTC: g.PauseStartUTC.UTC(),
		GCStartMS: msOf(g.StartNanos), PauseEndMS: msOf(g.PauseEndNanos),
		SuspendMS: msOf(g.SuspendNanos), PauseMS: msOf(g.PauseNanos), Pauses: g.Pauses,
		PauseRuntimeMS: Unknown, GCDurationMS: Unknown,
		PausePercent: round6(g.PausePercentSinceLastGC),
		Gen0AllocMB:  OptOf(g.Gen0AllocMB()), PeakMB: OptOf(g.HeapSizePeakMB()),
		AfterMB: OptOf(g.HeapSizeAfterMB()), PromotedMB: OptOf(g.PromotedMB()),
		PinnedObjects: Unknown, FinalizeSurvMB: Unknown,
		Heaps: g.Heaps, NoSuspension: g.NoSuspension, MissingSuspEnd: g.MissingSuspendEnd,
		LostEvents: g.LostEvents,
	}
	if g.DurationNanos >= 0 {
		r.GCDurationMS = OptOf(msOf(g.DurationNanos))
	}
	if g.PauseRuntimeNanos >= 0 {
		r.PauseRuntimeMS = OptOf(msOf(g.PauseRuntimeNanos))
	}
	for gen := range r.GenSizeMB {
		r.GenSizeMB[gen] = OptOf(g.GenSizeAfterMB(gen))
		r.SurvivalPercent[gen] = OptOf(g.SurvivalPercent(gen))
		r.FragPercent[gen] = OptOf(g.FragmentationPercent(gen))
	}
	if g.HasHeapStats {
		r.PinnedObjects = Opt(g.HeapStats.PinnedObjectCount)
		r.FinalizeSurvMB = OptOf(float64(g.HeapStats.FinalizationPromotedSize) / mb)
	}
	return r
}

// SuspensionRow is one runtime suspension that was not a GC's (Suspension)
// as every surface shows it: clrspy gc --json's suspensions, the live
// monitor's snapshot (top). Times are milliseconds (StartMS since the
// session start); the reason is the runtime's code, written by name.
type SuspensionRow struct {
	Reason    clrevents.SuspendReason `json:"reason"`
	StartMS   float64                 `json:"start_ms"`
	StartUTC  time.Time               `json:"start_utc"`
	ThreadID  uint64                  `json:"thread_id"`
	SuspendMS Opt                     `json:"suspend_ms"` // SuspendEEBegin → SuspendEEEnd; null: no SuspendEEEnd
	PauseMS   float64                 `json:"pause_ms"`
	// Incomplete: no RestartEEEnd (PauseMS runs to where it was given up).
	Incomplete bool `json:"incomplete,omitempty"`
}

// NewSuspensionRow is s's row. It does not allocate.
func NewSuspensionRow(s *Suspension) SuspensionRow {
	r := SuspensionRow{Reason: s.Reason, StartMS: msOf(s.StartNanos), StartUTC: s.StartUTC.UTC(),
		ThreadID: s.ThreadID, SuspendMS: Unknown, PauseMS: msOf(s.PauseNanos), Incomplete: s.Incomplete}
	if s.SuspendNanos >= 0 {
		r.SuspendMS = OptOf(msOf(s.SuspendNanos))
	}
	return r
}
