package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/internal/workload"
)

// runRecordTrigger launches the longgen2 workload (deliberately long
// blocking gen2 GCs) under `clrspy record --save-on-pause-over` and returns
// clrspy's stderr.
func runRecordTrigger(t *testing.T, over, out string, extra ...string) string {
	t.Helper()
	argv := workload.Argv(t, "longgen2", "nodes=3000000", "count=2")
	args := append([]string{"record", "--save-on-pause-over", over, "--before", "10s", "--after", "100ms", "-o", out}, extra...)
	_, stderr, runErr := runCaptured(t, append(append(args, "--"), argv...)...)
	if runErr != nil {
		t.Fatalf("clrspy record: %v\n%s", runErr, stderr)
	}
	return string(stderr)
}

// gcOfFile runs `clrspy gc --json FILE` and returns its GC rows.
func gcOfFile(t *testing.T, trace string) []gcRowJSON {
	t.Helper()
	out := filepath.Join(t.TempDir(), "gc.json")
	root := newRootCmd()
	root.SetArgs([]string{"gc", "--json", "--level", "none", "-o", out, trace})
	if err := root.Execute(); err != nil {
		t.Fatalf("clrspy gc %s: %v", trace, err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var d gcDoc
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	return d.GCs
}

var reSaved = regexp.MustCompile(`saved \d+ events around GC (\d+) to (\S+)`)

// TestRecordStopOnPauseOver: record keeps a ring, writes the window around
// the first pause over the threshold when it ends, and stops the session
// (one file, one save); clrspy gc reads the file and finds that pause in it.
// The threshold is 50 ms because the workload's long gen2 pauses run from
// about 100 to 250 ms depending on the machine's load.
func TestRecordStopOnPauseOver(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "slow.nettrace")
	stderr := runRecordTrigger(t, "50ms", trace)
	saves := reSaved.FindAllStringSubmatch(stderr, -1)
	if !strings.Contains(stderr, "armed: waiting for a GC pause over 50ms") || len(saves) != 1 || saves[0][2] != trace {
		t.Fatalf("want the armed notice and exactly one save to %s:\n%s", trace, stderr)
	}
	num, _ := strconv.ParseUint(saves[0][1], 10, 32)
	found := false
	for _, g := range gcOfFile(t, trace) {
		if uint64(g.Number) == num && g.PauseMS > 50 {
			found = true
		}
	}
	if !found {
		t.Errorf("%s lacks GC %d with its pause over 50 ms", trace, num)
	}
	if _, err := os.Stat(strings.TrimSuffix(trace, ".nettrace") + "-2.nettrace"); !os.IsNotExist(err) {
		t.Errorf("a second file was written without --rearm")
	}
}

// TestRecordStopOnPauseOverRearm: with --rearm every pause over the
// threshold gets a file of its own (FILE, FILE-2, ...), in GC order: each
// file holds the GC its save notice names, and the workload's two long gen2
// pauses are among those GCs.
func TestRecordStopOnPauseOverRearm(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "slow.nettrace")
	stderr := runRecordTrigger(t, "50ms", trace, "--rearm")
	saves := reSaved.FindAllStringSubmatch(stderr, -1)
	if len(saves) < 2 {
		t.Fatalf("--rearm saved %d file(s), want one per pause over 50 ms (at least 2):\n%s", len(saves), stderr)
	}
	var prev uint64
	gen2 := 0
	for i, m := range saves {
		num, _ := strconv.ParseUint(m[1], 10, 32)
		want := trace
		if i > 0 {
			want = filepath.Join(dir, fmt.Sprintf("slow-%d.nettrace", i+1))
		}
		if m[2] != want || num <= prev {
			t.Errorf("save %d: GC %d to %s, want a GC after %d to %s", i+1, num, m[2], prev, want)
		}
		prev = num
		found := false
		for _, g := range gcOfFile(t, m[2]) {
			if uint64(g.Number) == num && g.PauseMS > 50 {
				found = true
				if g.Gen == 2 {
					gen2++
				}
			}
		}
		if !found {
			t.Errorf("%s lacks GC %d with its pause over 50 ms", m[2], num)
		}
	}
	if gen2 < 2 {
		t.Errorf("%d of the saved GCs are long gen2 pauses, want the workload's 2", gen2)
	}
}
