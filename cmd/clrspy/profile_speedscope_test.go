package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// profile --format speedscope writes one evented (time-ordered) profile per
// thread, and leaves no spill file behind.
func TestProfileSpeedscopeEvented(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	out := filepath.Join(dir, "p.speedscope.json")
	if _, err := runGCCmd(t, "profile", "--format", "speedscope", "-o", out, reportTrace); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Profiles []struct {
			Type   string            `json:"type"`
			Events []json.RawMessage `json:"events"`
		} `json:"profiles"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	events := 0
	for _, p := range doc.Profiles {
		if p.Type != "evented" {
			t.Errorf("profile type %q", p.Type)
		}
		events += len(p.Events)
	}
	// 8 sampled threads in the workload trace; the main thread alone opens
	// and closes frames more than a thousand times.
	if len(doc.Profiles) != 8 || events < 1000 {
		t.Errorf("%d profiles, %d events", len(doc.Profiles), events)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "*.spill"))
	if len(left) != 0 {
		t.Errorf("spill files left: %v", left)
	}
}
