package main

import (
	"encoding/csv"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const gcTraces = "../../../shared/traces"

func runGCCmd(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRootCmd()
	var out strings.Builder
	root.SetOut(&out)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

// TestGCFailOnPauseOver: the objver4 trace's longest pause is 48.10 ms.
func TestGCFailOnPauseOver(t *testing.T) {
	trace := filepath.Join(gcTraces, "perfview__eventpipe-dotnetcore3.0-win-x64-objver4.nettrace")
	_, err := runGCCmd(t, "gc", "--level", "none", "--fail-on-pause-over", "40ms", trace)
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != 3 || !strings.Contains(ee.msg, "48.096 ms") {
		t.Errorf("over 40ms: %v", err)
	}
	out, err := runGCCmd(t, "gc", "--level", "none", "--fail-on-pause-over", "50ms", trace)
	if err != nil || !strings.Contains(out, "478 GCs, 20.05% of 38.562 s paused, longest 48.10 ms (GC 331, 0N), p99 26.69 ms") {
		t.Errorf("under 50ms: %v\n%s", err, out)
	}
}

func TestGCCSVFile(t *testing.T) {
	trace := filepath.Join(gcTraces, "filtrace__alloc.nettrace")
	out := filepath.Join(t.TempDir(), "gc.csv")
	if _, err := runGCCmd(t, "gc", "--csv", "--level", "none", "-o", out, trace); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	// 7 GCs: 6 induced gen2 and one gen0 AllocSmall, GC 5 (CATALOG.md
	// §8.3 counts; the order from the GCStart payloads).
	if len(rows) != 8 {
		t.Fatalf("%d rows", len(rows))
	}
	for i, r := range rows[1:] {
		want := "2NI Induced"
		if i == 4 {
			want = "0N AllocSmall"
		}
		if r[3]+" "+r[2] != want || r[0] != strconv.Itoa(i+1) {
			t.Errorf("row %d: %v, want GC %d %s", i+1, r, i+1, want)
		}
	}
}

func TestGCFlagErrors(t *testing.T) {
	trace := filepath.Join(gcTraces, "filtrace__alloc.nettrace")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"gc", "--json", "--csv", trace}, "contradict"},
		{[]string{"gc", "--level", "loud", trace}, "unknown --level"},
		{[]string{"gc", "--info", "1s", "--warn", "10ms", trace}, "--info"},
		{[]string{"gc", "--save-on-pause-over", "1s", "--save-to", "x.nettrace", trace}, "live sessions only"},
		{[]string{"gc", "--save-on-pause-over", "1s", "--pid", "1"}, "--save-to"},
		{[]string{"gc", "no-such-file.nettrace"}, "no such file"},
	} {
		_, err := runGCCmd(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
}
