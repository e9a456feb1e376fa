package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportSnapshotNotInduced: the page of a trace holding a heap dump
// does not report the snapshot's own GC as the application calling
// GC.Collect. The fixture's only induced GC is the dump's (the workload
// never collects), so the induced finding would be a false alarm; the
// facts name the dump's GC instead.
func TestReportSnapshotNotInduced(t *testing.T) {
	dir := t.TempDir()
	trace := gunzipTrace(t, "heap-graph.nettrace.gz", dir, 0)
	page := filepath.Join(dir, "p.html")
	if _, err := runGCCmd(t, "report", trace, "-o", page); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	_, g, err := readSnapshotFile(trace, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if g.GC == 0 {
		t.Fatal("the fixture's snapshot has no GC number")
	}
	if s := string(b); strings.Contains(s, "gc.induced_per_min") || strings.Contains(s, "something calls GC.Collect") {
		t.Errorf("the page reports the snapshot's own GC as induced by the application")
	}
	if s := string(b); strings.Contains(s, "gc.max_pause_ms") && !strings.Contains(s, "the heap snapshot") {
		t.Errorf("the longest-pause finding does not say it is the snapshot's own GC")
	}
}
