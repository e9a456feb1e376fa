package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSnapshotBadInput: every bad input is one line naming the cause.
func TestSnapshotBadInput(t *testing.T) {
	dir := t.TempDir()
	cut := filepath.Join(dir, "cut.gcdump")
	data, err := os.ReadFile("../../testdata/traces/heap-graph-dotnet-gcdump.gcdump")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cut, data[:len(data)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"snapshot", "../../testdata/traces/gc-wks.nettrace"}, "no heap dump in the events"},
		{[]string{"snapshot", "../../README.md"}, "not a nettrace or netperf stream"},
		{[]string{"snapshot", cut}, "not a readable .gcdump: truncated"},
		{[]string{"snapshot", "--diff", cut}, "--diff needs two trace files"},
		{[]string{"snapshot", "--why", "NoSuchType", "../../testdata/traces/heap-graph-dotnet-gcdump.gcdump"}, "no type of that name"},
		{[]string{"snapshot", "--tree", "-1", cut}, "--tree and --top must be 0 or more"},
	} {
		_, _, err := runCaptured(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: %v, want one line with %q", c.args, err, c.want)
		}
	}
}
