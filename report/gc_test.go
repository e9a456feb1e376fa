//go:build compat

package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/internal/tracetest"
)

// TestGCTextGolden: the diagnostics trace has blocking, background and
// foreground GCs and a cut. Checked by hand once against the raw events:
// 385 GCs, 384 complete; by type 262 NonConcurrent + 2 Background + 120
// Foreground complete; the longest pauses are the two BGCs (2022: 80.99 ms,
// 1794: 75.44 ms = 1.781 + 11.717 + 61.942 ms of stops) and foreground GC
// 1855 (64.66 ms, of which 55.04 ms waiting for the BGC's last stop);
// suspensions by reason 675 / 382 / 4 as in CATALOG.md.
func TestGCTextGolden(t *testing.T) {
	res := gcResult(t, tracetest.CompatPath(t, "diagnostics__trace.nettrace"))
	var b bytes.Buffer
	if err := WriteGCText(&b, Input{Source: "diagnostics__trace.nettrace", Complete: true}, res); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"385 GCs, 23.43% of 25.024 s paused, longest 80.99 ms (GC 2022, 2B), p99 25.86 ms, 1 incomplete", "NonConcurrent 262 Background 2 Foreground 120",
		"  2022   2B  AllocSmall", "75.44", "SuspendForGCPrep      4",
		// Stopped time counts 1855's 54.85 ms inside 1794's stop once;
		// GC 1767 began before the trace.
		"  all    384        0    5862.9      5766.4", "overlapping GC stops: 54.85 ms counted once",
		"began before the trace: GC 1767 (>= 6.830 ms)"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("text report lacks %q", s)
		}
	}
	tracetest.Golden(t, "gc_diagnostics.txt", b.Bytes())
}

// TestGCJSONGolden: filtrace alloc has 7 GCs (1 gen0 AllocSmall, 6 gen2
// Induced, CATALOG.md §8.3), one SuspendForGC per GC and no other
// suspensions.
func TestGCJSONGolden(t *testing.T) {
	res := gcResult(t, tracetest.CompatPath(t, "filtrace__alloc.nettrace"))
	var b bytes.Buffer
	if err := WriteGCJSON(&b, Input{Source: "filtrace__alloc.nettrace", Complete: true}, res); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Summary struct {
			GCCount      int     `json:"gc_count"`
			TotalPauseMS float64 `json:"total_pause_ms"`
			MaxPauseMS   float64 `json:"max_pause_ms"`
			PausePct     float64 `json:"pause_time_percent"`
			ByGen        map[string]struct {
				Count        int     `json:"count"`
				TotalPauseMS float64 `json:"total_pause_ms"`
				MaxPauseMS   float64 `json:"max_pause_ms"`
				P50          float64 `json:"p50_ms"`
				P90          float64 `json:"p90_ms"`
				P99          float64 `json:"p99_ms"`
			} `json:"by_generation"`
			Reasons []struct {
				Reason string `json:"reason"`
				Count  int    `json:"count"`
			} `json:"suspensions_by_reason"`
		} `json:"summary"`
		Lost *uint64 `json:"events_lost"`
		GCs  []struct {
			Reason    string   `json:"reason"`
			Gen       string   `json:"gen"`
			PauseMS   float64  `json:"pause_ms"`
			RuntimeMS *float64 `json:"pause_runtime_ms"`
			StartSeen *bool    `json:"start_seen"`
			Induced   bool     `json:"induced"`
		} `json:"gcs"`
		Suspensions []any `json:"suspensions"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	s := doc.Summary
	if g2 := s.ByGen["gen2"]; g2.P50 != 0.1265 || g2.P90 != 0.4261 || g2.P99 != 0.4261 || g2.MaxPauseMS != 0.4261 {
		// By hand from the raw events: the gen2 pauses are 0.4261 (GC 1:
		// SuspendEEBegin 20.6362 → RestartEEEnd 21.0623), 0.1265 (GC 2), ...
		t.Errorf("gen2 stats %+v", g2)
	}
	if s.GCCount != 7 || s.ByGen["gen0"].Count != 1 || s.ByGen["gen2"].Count != 6 || s.ByGen["gen1"].Count != 0 || doc.Lost == nil ||
		len(s.Reasons) != 1 || s.Reasons[0].Reason != "SuspendForGC" || s.Reasons[0].Count != 7 || len(doc.GCs) != 7 || doc.Suspensions == nil {
		t.Errorf("summary %+v", s)
	}
	var sum float64
	induced := 0
	for _, g := range doc.GCs {
		if g.StartSeen == nil || !*g.StartSeen || g.RuntimeMS == nil || *g.RuntimeMS >= g.PauseMS || *g.RuntimeMS < g.PauseMS*0.9 {
			t.Errorf("GC row %+v: start_seen and pause_runtime_ms (a little short of pause_ms: no restart in it)", g)
		}
		sum += g.PauseMS
		if g.Induced && g.Gen == "2NI" && g.Reason == "Induced" {
			induced++
		}
	}
	if induced != 6 || sum-s.TotalPauseMS > 1e-6 || s.TotalPauseMS-sum > 1e-6 {
		t.Errorf("induced %d, pauses add to %f, total %f", induced, sum, s.TotalPauseMS)
	}
	// GC 1 by the runtime's definition: SuspendEEBegin 20.6362 → GCEnd
	// 21.0477 (GCStart 20.6857 + 0.362).
	if g := doc.GCs[0]; g.RuntimeMS == nil || *g.RuntimeMS != 0.4115 {
		t.Errorf("GC 1 runtime pause %v, want 0.4115", g.RuntimeMS)
	}
	tracetest.Golden(t, "gc_filtrace_alloc.json", b.Bytes())
}

func TestGCCSV(t *testing.T) {
	res := gcResult(t, tracetest.CompatPath(t, "perfview__eventpipe-dotnetcore3.0-win-x64-objver4.nettrace"))
	var b bytes.Buffer
	if err := WriteGCCSV(&b, res); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 479 || len(rows[0]) != 30 || rows[0][0] != "Num" || rows[0][27] != "Suspend Msec" ||
		rows[0][28] != "PauseRuntimeMSec" || rows[0][29] != "StartSeen" {
		t.Fatalf("%d rows, header %v", len(rows), rows[0])
	}
	// GC 1: PerfView's baseline shows GC/Start Count=1 and HeapStats
	// PinnedObjectCount=2; gen0 survival 7%. By the runtime's definition
	// its pause runs from SuspendEEBegin (5455.2013) to GCEnd (5475.9763).
	r := rows[1]
	if r[0] != "1" || r[2] != "AllocSmall" || r[3] != "0N" || r[25] != "2" || !strings.HasPrefix(r[13], "7.") || r[16] != "" ||
		r[4] != "20.865" || r[28] != "20.775" || r[29] != "true" {
		t.Errorf("first row %v", r)
	}
}

// TestGCCSVStartUnseen: GC 1767 began before the diagnostics trace; its
// row says so.
func TestGCCSVStartUnseen(t *testing.T) {
	res := gcResult(t, tracetest.CompatPath(t, "diagnostics__trace.nettrace"))
	var b bytes.Buffer
	if err := WriteGCCSV(&b, res); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	unseen := 0
	for _, r := range rows[1:] {
		if r[29] == "false" {
			unseen++
			if r[0] != "1767" || r[4] != "6.830" {
				t.Errorf("row %v", r)
			}
		}
	}
	if unseen != 1 || len(rows) != 385 {
		t.Errorf("%d rows with StartSeen false of %d", unseen, len(rows)-1)
	}
}
