package gcpause

import (
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// Summary is the rollup of a result as every surface shows it: clrspy gc
// --json's summary, the report page's (file and live), the live
// monitor's snapshot (top, serve's web view and metrics). Times are
// milliseconds.
type Summary struct {
	GCCount             int                   `json:"gc_count"` // complete GCs
	GCsStarted          int                   `json:"gcs_started"`
	Incomplete          int                   `json:"incomplete"` // given up or still open
	SessionMS           float64               `json:"session_ms"`
	TotalPauseMS        float64               `json:"total_pause_ms"` // stopped time, overlaps once
	OverlapMS           float64               `json:"overlap_ms"`     // sum of GC pauses − total_pause_ms
	TotalPauseRuntimeMS float64               `json:"total_pause_runtime_ms"`
	StartUnseen         int                   `json:"start_unseen"` // GCs begun before the trace: not in max/mean/percentiles
	MaxPauseMS          float64               `json:"max_pause_ms"`
	MeanPauseMS         float64               `json:"mean_pause_ms"`
	P50MS               float64               `json:"p50_ms"`
	P90MS               float64               `json:"p90_ms"`
	P99MS               float64               `json:"p99_ms"`
	P999MS              float64               `json:"p99_9_ms"`
	PauseTimePercent    float64               `json:"pause_time_percent"`
	TotalSuspendMS      float64               `json:"total_suspend_ms"`
	MaxSuspendMS        float64               `json:"max_suspend_ms"`
	ByGeneration        map[string]GenSummary `json:"by_generation"`         // gen0, gen1, gen2
	ByType              map[string]int        `json:"by_type"`               // non_concurrent, background, foreground
	SuspensionsByReason []ReasonRollup        `json:"suspensions_by_reason"` // written in ms
	UnmatchedRestarts   int                   `json:"unmatched_restarts"`
}

// GenSummary is one generation's rollup.
type GenSummary struct {
	Count          int     `json:"count"`
	Induced        int     `json:"induced"`
	TotalPauseMS   float64 `json:"total_pause_ms"`
	OverlapMS      float64 `json:"overlap_ms"`
	RuntimeMS      float64 `json:"total_pause_runtime_ms"`
	StartUnseen    int     `json:"start_unseen"`
	MeanPauseMS    float64 `json:"mean_pause_ms"`
	MaxPauseMS     float64 `json:"max_pause_ms"`
	P50MS          float64 `json:"p50_ms"`
	P90MS          float64 `json:"p90_ms"`
	P99MS          float64 `json:"p99_ms"`
	P999MS         float64 `json:"p99_9_ms"`
	PausePercent   float64 `json:"pause_time_percent"`
	TotalSuspendMS float64 `json:"total_suspend_ms"`
	MaxSuspendMS   float64 `json:"max_suspend_ms"`
}

// GenKeys are the ByGeneration keys of generations 0, 1 and 2.
var GenKeys = [3]string{"gen0", "gen1", "gen2"}

// Gen is generation i's rollup (0, 1, 2).
func (s *Summary) Gen(i int) GenSummary { return s.ByGeneration[GenKeys[min(max(i, 0), 2)]] }

func genSummary(s Rollup) GenSummary {
	return GenSummary{
		Count: s.Count, Induced: s.Induced,
		TotalPauseMS: msOf(s.TotalNanos), OverlapMS: msOf(s.SumNanos - s.TotalNanos), RuntimeMS: msOf(s.RuntimeNanos),
		StartUnseen: s.StartUnseen, MeanPauseMS: msOf(s.MeanNanos), MaxPauseMS: msOf(s.MaxNanos),
		P50MS: msOf(s.P50), P90MS: msOf(s.P90), P99MS: msOf(s.P99), P999MS: msOf(s.P999),
		PausePercent:   round6(s.PausePercent),
		TotalSuspendMS: msOf(s.TotalSuspend), MaxSuspendMS: msOf(s.MaxSuspend),
	}
}

// NewSummary is the rollup of a result.
func NewSummary(res *Result) Summary {
	a := res.All
	sum := Summary{
		GCCount: res.Complete, GCsStarted: res.Started, Incomplete: res.Incomplete,
		SessionMS:    msOf(res.SessionNanos),
		TotalPauseMS: msOf(a.TotalNanos), OverlapMS: msOf(a.SumNanos - a.TotalNanos),
		TotalPauseRuntimeMS: msOf(a.RuntimeNanos), StartUnseen: a.StartUnseen,
		MaxPauseMS: msOf(a.MaxNanos), MeanPauseMS: msOf(a.MeanNanos),
		P50MS: msOf(a.P50), P90MS: msOf(a.P90), P99MS: msOf(a.P99), P999MS: msOf(a.P999),
		PauseTimePercent: round6(a.PausePercent),
		TotalSuspendMS:   msOf(a.TotalSuspend), MaxSuspendMS: msOf(a.MaxSuspend),
		ByGeneration:        map[string]GenSummary{},
		ByType:              map[string]int{},
		SuspensionsByReason: slices.Clone(res.ByReason),
		UnmatchedRestarts:   res.UnmatchedRestarts,
	}
	for g, s := range res.ByGen {
		sum.ByGeneration["gen"+strconv.Itoa(g)] = genSummary(s)
	}
	for t, n := range res.ByType {
		sum.ByType[snakeCase(t.String())] = n
	}
	if sum.SuspensionsByReason == nil {
		sum.SuspensionsByReason = []ReasonRollup{} // [] in JSON, not null
	}
	return sum
}

// snakeCase is a type's name as a JSON key: NonConcurrent → non_concurrent.
func snakeCase(s string) string {
	var b strings.Builder
	for i, r := range s {
		if unicode.IsUpper(r) && i > 0 {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}
