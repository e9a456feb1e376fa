package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestTruncatedTraceEveryCommand: every analysis reads a cut trace up to
// the cut, says where it was cut in one warning line, succeeds, and
// reports what the complete events hold. The trace is the truncated
// dotnet-trace recording; the counts are CATALOG.md's for it (385 GC
// starts, 384 ends, 7,338 samples, 9 contention starts without a stop).
func TestTruncatedTraceEveryCommand(t *testing.T) {
	path := filepath.Join(traces, "diagnostics__trace.nettrace")
	warning := "clrspy: warning: " + path + ": the trace is truncated at offset 4170673 (inside EventBlock): only the events before the cut are counted"
	run := func(args ...string) []byte {
		t.Helper()
		stdout, stderr, err := runCaptured(t, append(args, path)...)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if !strings.Contains(string(stderr), warning) {
			t.Errorf("%v: stderr lacks the truncation warning: %q", args, lastLine(stderr))
		}
		return stdout
	}

	var gc struct {
		Summary struct {
			GCCount    int `json:"gc_count"`
			GCsStarted int `json:"gcs_started"`
			Incomplete int `json:"incomplete"`
		} `json:"summary"`
	}
	if err := json.Unmarshal(run("gc", "--json"), &gc); err != nil {
		t.Fatal(err)
	}
	if s := gc.Summary; s.GCsStarted != 385 || s.GCCount != 384 || s.Incomplete != 1 {
		t.Errorf("gc: %+v, want 385 started, 384 complete, 1 incomplete", s)
	}

	var lk struct {
		Summary struct {
			Contentions int `json:"contentions"`
			Unpaired    int `json:"unpaired"`
		} `json:"summary"`
	}
	if err := json.Unmarshal(run("locks", "--json"), &lk); err != nil {
		t.Fatal(err)
	}
	if lk.Summary.Contentions != 0 || lk.Summary.Unpaired != 9 {
		t.Errorf("locks: %+v, want 0 complete contentions, 9 unpaired starts", lk.Summary)
	}

	var hp struct {
		GCs int `json:"gcs"`
	}
	if err := json.Unmarshal(run("heap", "--json"), &hp); err != nil {
		t.Fatal(err)
	}
	if hp.GCs != 385 {
		t.Errorf("heap: %d GCs, want 385", hp.GCs)
	}

	out := filepath.Join(t.TempDir(), "cut.folded")
	_, stderr, err := runCaptured(t, "profile", "--format", "folded", "-o", out, path)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(stderr); !strings.Contains(s, warning) || !strings.Contains(s, "7338 samples") {
		t.Errorf("profile: %q", s)
	}
}

func lastLine(b []byte) string {
	s := strings.TrimRight(string(b), "\n")
	return s[strings.LastIndexByte(s, '\n')+1:]
}
