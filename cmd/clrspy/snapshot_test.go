package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/report"
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
		{[]string{"snapshot", "--max-memory", "1MiB", cut}, "--max-memory 1MiB: want a size of at least 16MiB"},
		{[]string{"snapshot", "--max-memory", "lots", cut}, "--max-memory lots: want a size"},
		{[]string{"snapshot", "--max-memory", "15", cut}, "--max-memory 15: want a size of at least 16MiB"},
		// A plain number is MiB: 16 passes the flag and the file is read.
		{[]string{"snapshot", "--max-memory", "16", cut}, "not a readable .gcdump: truncated"},
	} {
		_, _, err := runCaptured(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: %v, want one line with %q", c.args, err, c.want)
		}
	}
}

// TestSnapshotCutGcdump: a .gcdump cut in its node data gives the objects
// it still holds, marked partial in the document (complete false, the
// partial line) and in one warning line.
func TestSnapshotCutGcdump(t *testing.T) {
	data, err := os.ReadFile("../../testdata/traces/heap-graph-dotnet-gcdump.gcdump")
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut.gcdump")
	if err := os.WriteFile(cut, data[:len(data)-6200], 0o600); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, err := runCaptured(t, "snapshot", "--json", cut)
	if err != nil {
		t.Fatal(err)
	}
	var d report.SnapshotDocument
	if err := json.Unmarshal(stdout, &d); err != nil {
		t.Fatal(err)
	}
	if d.Complete || !d.Missing.FileCut || d.Missing.CutNodes == 0 || d.Objects == 0 || d.Objects >= 497 {
		t.Errorf("complete %v, %d objects (the whole file: 497), missing %+v", d.Complete, d.Objects, d.Missing)
	}
	if len(d.Partial) != 1 || !strings.Contains(d.Partial[0], "the .gcdump file is cut short") {
		t.Errorf("partial %q", d.Partial)
	}
	if lines := strings.Split(strings.TrimSpace(string(stderr)), "\n"); len(lines) != 1 || !strings.Contains(lines[0], "incomplete") {
		t.Errorf("stderr %q, want one warning line", stderr)
	}
}

// TestSnapshotMaxMemory: the graph workload's snapshot (the fixture trace)
// spilled to temporary files under --max-memory gives the very report it
// gives in memory, and leaves nothing in $TMPDIR.
func TestSnapshotMaxMemory(t *testing.T) {
	dir := t.TempDir()
	z, err := os.Open("../../testdata/traces/heap-graph.nettrace.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	zr, err := gzip.NewReader(z)
	if err != nil {
		t.Fatal(err)
	}
	trace := filepath.Join(dir, "heap-graph.nettrace")
	f, err := os.Create(trace)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(f, zr); err != nil {
		t.Fatal(err)
	}
	f.Close()
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	want, _, err := runCaptured(t, "snapshot", "--json", "--why", "GraphLeaf", trace)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := runCaptured(t, "snapshot", "--json", "--why", "GraphLeaf", "--max-memory", "16MiB", trace)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(want, []byte(`"GraphLeaf"`)) && !bytes.Contains(want, []byte("Workload.GraphLeaf")) {
		t.Fatalf("no GraphLeaf path in the report:\n%s", want)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("--max-memory report differs:\n%s\nwant:\n%s", got, want)
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Errorf("%d files left in TMPDIR, want none (spill files are unlinked when made)", len(ents))
	}
}

// TestSnapshotGcdumpByContent: a .gcdump is known by its first bytes, not
// its name: on standard input, or under another name, it is read as a
// .gcdump (it was "expected Trace object, found GCHeapDump").
func TestSnapshotGcdumpByContent(t *testing.T) {
	src := "../../testdata/traces/heap-graph-dotnet-gcdump.gcdump"
	want, _, err := runCaptured(t, "snapshot", "--json", src)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(src)
	renamed := filepath.Join(t.TempDir(), "heap.bin")
	os.WriteFile(renamed, data, 0o644)
	got, _, err := runCaptured(t, "snapshot", "--json", renamed)
	if err != nil {
		t.Fatalf("renamed: %v", err)
	}
	norm := func(b []byte, name string) string { return strings.ReplaceAll(string(b), name, "SRC") }
	if norm(got, renamed) != norm(want, src) {
		t.Errorf("renamed .gcdump: a different report")
	}
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	old := os.Stdin
	os.Stdin = f
	defer func() { os.Stdin = old }()
	got, _, err = runCaptured(t, "snapshot", "--json", "-")
	if err != nil {
		t.Fatalf("stdin: %v", err)
	}
	if !strings.Contains(string(got), `"source": "stdin"`) || !strings.Contains(string(got), `"objects": 497`) {
		t.Errorf("stdin .gcdump:\n%.400s", got)
	}
	if _, err := os.Stat(src); err != nil {
		t.Fatal(err)
	}
}
