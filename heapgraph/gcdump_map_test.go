package heapgraph

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// vmHWM is the process's peak resident memory so far, in bytes.
func vmHWM(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

// TestReadGCDumpFileMapped: a .gcdump file is mapped, not read whole: the
// fixture gives the same graph either way, and a file of 2 GiB (the
// fixture followed by a sparse hole, as the hostile 3 GiB one) costs no
// more than a few MB of peak resident memory (read whole, it cost twice
// its size).
func TestReadGCDumpFileMapped(t *testing.T) {
	const fixture = "../testdata/traces/heap-graph-dotnet-gcdump.gcdump"
	data, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	want, err := ReadGCDump(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(fixture)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := ReadGCDumpFile(f, 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	if got.N != want.N || got.N != 497 || got.Bytes != want.Bytes {
		t.Errorf("mapped: %d objects %d bytes; read: %d objects %d bytes", got.N, got.Bytes, want.N, want.Bytes)
	}
	big := filepath.Join(t.TempDir(), "big.gcdump")
	os.WriteFile(big, data, 0o600)
	if err := os.Truncate(big, 2<<30); err != nil {
		t.Fatal(err)
	}
	g, err := os.Open(big)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	before := vmHWM(t)
	_, err = ReadGCDumpFile(g, 64<<20)
	grew := vmHWM(t) - before
	t.Logf("2 GiB sparse .gcdump: %v; peak RSS grew %d MB", err, grew>>20)
	if grew > 64<<20 {
		t.Errorf("peak RSS grew %d MB reading a 2 GiB file", grew>>20)
	}
}
