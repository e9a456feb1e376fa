package main

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/internal/workload"
)

// TestProfilePerfFrameworkNamed: a process spending its time in CoreLib's
// precompiled (ReadyToRun) code, profiled by the perf sampler launched
// and attached, gets method names for its hottest leaves, never
// module+0xOFFSET: UTF-8 transcoding is among the top leaves by name, and
// no leaf of the top ten is a ".dll+0x" frame.
func TestProfilePerfFrameworkNamed(t *testing.T) {
	check := func(t *testing.T, folded string) {
		t.Helper()
		leaves := map[string]int{}
		total := 0
		for _, line := range strings.Split(strings.TrimSpace(folded), "\n") {
			i := strings.LastIndexByte(line, ' ')
			n, err := strconv.Atoi(line[i+1:])
			if i < 0 || err != nil {
				t.Fatalf("folded line %q", line)
			}
			frames := strings.Split(line[:i], ";")
			leaf := frames[len(frames)-1]
			if p := strings.IndexByte(leaf, '('); p > 0 {
				leaf = leaf[:p]
			}
			leaves[leaf] += n
			total += n
		}
		names := make([]string, 0, len(leaves))
		for k := range leaves {
			names = append(names, k)
		}
		sort.Slice(names, func(i, j int) bool { return leaves[names[i]] > leaves[names[j]] })
		top := names[:min(10, len(names))]
		utf8 := false
		for _, n := range top {
			if strings.Contains(n, ".dll+0x") {
				t.Errorf("top leaf %s (%d of %d samples) is unnamed ReadyToRun code; top %v", n, leaves[n], total, top)
			}
			if strings.HasPrefix(n, "System.Text.Unicode.Utf8Utility.Transcode") {
				utf8 = true
			}
		}
		if !utf8 || total < 50 {
			t.Errorf("%d samples; no Utf8Utility.Transcode* among the top leaves %v", total, top)
		}
	}
	t.Run("launch", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "framework.folded")
		_, stderr, err := runCaptured(t, append([]string{"profile", "--sampler", "perf", "--format", "folded", "-o", out, "--"},
			workload.Argv(t, "framework", "seconds=3")...)...)
		if err != nil {
			t.Fatalf("%v\n%s", err, stderr)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		check(t, string(b))
	})
	t.Run("attach", func(t *testing.T) {
		w := workload.Start(t, nil, "framework", "seconds=30")
		out := filepath.Join(t.TempDir(), "framework.folded")
		_, stderr, err := runCaptured(t, "profile", "--sampler", "perf", "--format", "folded", "-o", out,
			"--duration", "3s", "--pid", strconv.Itoa(w.Pid))
		if err != nil {
			t.Fatalf("%v\n%s", err, stderr)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		check(t, string(b))
	})
}
