package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// TestHeapFile runs `clrspy heap` on the objver4 trace in each output form.
func TestHeapFile(t *testing.T) {
	trace := filepath.Join(traces, "perfview__eventpipe-dotnetcore3.0-win-x64-objver4.nettrace")
	out, err := runCLI(t, "heap", "--top", "3", trace)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"478 GCs, 35458 sampled objects followed (35421 dead, 37 alive at end)", "System.Char[]", "… 17 more types", "age at death"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	out, err = runCLI(t, "heap", "--json", "--objects", trace)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		GCs     int `json:"gcs"`
		Tracked int `json:"tracked_objects"`
		Objects []struct {
			Type  string `json:"type"`
			Alive bool   `json:"alive_at_end"`
		} `json:"objects"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	if d.GCs != 478 || d.Tracked != 35458 || len(d.Objects) != 35458 || d.Objects[0].Type != "System.Object[]" {
		t.Errorf("json: %d GCs, %d tracked, %d objects", d.GCs, d.Tracked, len(d.Objects))
	}
	pb := filepath.Join(t.TempDir(), "heap.pb.gz")
	if _, err := runCLI(t, "heap", "--format", "pprof", "-o", pb, trace); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(pb)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil || len(p.Sample) != 35458 || p.SampleType[3].Type != "inuse_space" {
		t.Errorf("pprof: %v, %d samples", err, len(p.Sample))
	}
}

func TestHeapBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"heap", "no-such.nettrace"}, "no-such.nettrace: no such file"},
		{[]string{"heap", "--objects", "x"}, "--objects needs --json"},
		{[]string{"heap", "--format", "svg", "x"}, `unknown --format "svg"`},
		{[]string{"heap", "--json", "--format", "pprof", "x"}, "contradict"},
		{[]string{"heap", "--top", "-1", "x"}, "--top must be 0 or more"},
		// --threads is shared by every command that reads files.
		{[]string{"heap", "--threads", "-1", "x"}, "--threads -1: want 0 (one per core) or more"},
		{[]string{"stat", "--threads", "-2", "x"}, "--threads -2: want 0 (one per core) or more"},
		{[]string{"report", "--threads", "-3", "x"}, "--threads -3: want 0 (one per core) or more"},
	} {
		_, err := runCLI(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: error %v, want one line containing %q", c.args, err, c.want)
		}
	}
}
