package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

var snakeKey = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// keysOf collects every object key of a JSON document, with its path.
func keysOf(v any, path string, out map[string]string) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			out[k] = path + "." + k
			keysOf(e, path+"."+k, out)
		}
	case []any:
		for _, e := range x {
			keysOf(e, path+"[]", out)
		}
	}
}

// TestJSONContract: every --json document uses snake_case keys only and
// says what it was built from: on the truncated trace, truncated true with
// the cut's offset and complete false; on the webapp trace, the 2,236
// events the runtime dropped (the reader's total, as `stat` reports it),
// in every analysis, not only gc.
func TestJSONContract(t *testing.T) {
	cut := filepath.Join(traces, "diagnostics__trace.nettrace")
	lossy := filepath.Join(traces, "dotnetdiag__dotnet-5.0-SampleProfiler-webapp.golden.nettrace")
	type input struct {
		Source      string `json:"source"`
		EventsLost  *int64 `json:"events_lost"`
		Truncated   *bool  `json:"truncated"`
		TruncatedAt *int64 `json:"truncated_at"`
		Complete    *bool  `json:"complete"`
	}
	for _, c := range []struct {
		trace     string
		lost      int64
		truncated bool
	}{{cut, 0, true}, {lossy, 2236, false}} {
		for _, args := range [][]string{{"gc", "--json"}, {"heap", "--json"}, {"locks", "--json"}, {"stat", "--json"}, {"exceptions", "--json"}, {"threadpool", "--json"}, {"requests", "--json"}} {
			stdout, _, err := runCaptured(t, append(args, c.trace)...)
			if err != nil {
				t.Fatalf("%v %s: %v", args, c.trace, err)
			}
			var doc any
			if err := json.Unmarshal(stdout, &doc); err != nil {
				t.Fatalf("%v: %v", args, err)
			}
			keys := map[string]string{}
			keysOf(doc, "", keys)
			for k, p := range keys {
				if !snakeKey.MatchString(k) {
					t.Errorf("%v: key %q (at %s) is not snake_case", args, k, p)
				}
			}
			var in input
			json.Unmarshal(stdout, &in)
			if in.EventsLost == nil || *in.EventsLost != c.lost || in.Truncated == nil || *in.Truncated != c.truncated ||
				in.Complete == nil || *in.Complete || in.Source != c.trace {
				t.Errorf("%v %s: input %+v, want events_lost %d, truncated %v, complete false", args, filepath.Base(c.trace), in, c.lost, c.truncated)
			}
			if c.truncated && (in.TruncatedAt == nil || *in.TruncatedAt != 4170673) {
				t.Errorf("%v: truncated_at %v, want 4170673", args, in.TruncatedAt)
			}
		}
	}
	stdout, _, code := clrspyRun(t, "ps", "--json")
	if code != 0 {
		t.Fatalf("ps --json exit %d", code)
	}
	var ps any
	json.Unmarshal([]byte(stdout), &ps)
	keys := map[string]string{}
	keysOf(ps, "", keys)
	for k := range keys {
		if !snakeKey.MatchString(k) {
			t.Errorf("ps --json: key %q is not snake_case", k)
		}
	}
}

// TestPartialEveryFormat: a report built from a partial input says so
// where a reader of that format looks: the first line of a text report,
// the pprof comments, the speedscope profile's name, the flame graph page.
func TestPartialEveryFormat(t *testing.T) {
	cut := filepath.Join(traces, "diagnostics__trace.nettrace")
	const first = "PARTIAL REPORT: the trace is truncated at offset 4170673 (inside EventBlock): only the events before the cut are counted"
	dir := t.TempDir()
	for _, cmd := range []string{"gc", "heap", "locks", "exceptions", "threadpool"} {
		out := filepath.Join(dir, cmd+".txt")
		if _, _, err := runCaptured(t, cmd, "-o", out, cut); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(out)
		if line, _, _ := strings.Cut(string(b), "\n"); line != first {
			t.Errorf("%s -o: first line %q, want %q", cmd, line, first)
		}
	}
	pb := filepath.Join(dir, "cpu.pb.gz")
	if _, _, err := runCaptured(t, "profile", "-o", pb, cut); err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open(pb)
	p, err := profile.Parse(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(p.Comments, "\n"), "PARTIAL: the trace is truncated at offset 4170673") {
		t.Errorf("pprof comments %q", p.Comments)
	}
	for _, c := range []struct{ format, want string }{
		{"speedscope", `(PARTIAL: the trace is truncated at offset 4170673`},
		{"html", `PARTIAL: the trace is truncated at offset 4170673`},
	} {
		out := filepath.Join(dir, "p."+c.format)
		if _, _, err := runCaptured(t, "profile", "--format", c.format, "-o", out, cut); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(out); !bytes.Contains(b, []byte(c.want)) {
			t.Errorf("profile --format %s does not say the profile is partial", c.format)
		}
	}
}

// TestVersion: `clrspy --version` and `clrspy version` print the module
// version Go stamped from the checkout (a pseudo-version, +dirty when
// modified) and the VCS revision; "dev" only without build info.
func TestVersion(t *testing.T) {
	re := regexp.MustCompile(`^clrspy v\d+\.\d+\.\d+-\S+ \([0-9a-f]{12}(, modified)?\) linux/amd64 go1\.\d+`)
	for _, args := range [][]string{{"--version"}, {"version"}} {
		out, _, code := clrspyRun(t, args...)
		if code != 0 || !re.MatchString(out) || strings.Count(out, "\n") != 1 {
			t.Errorf("clrspy %v: %q (exit %d), want %s", args, out, code, re)
		}
	}
	if v := versionString(nil); v != "dev" {
		t.Errorf("no build info: %q", v)
	}
	if v := versionString(&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}); v != "dev" {
		t.Errorf("(devel): %q", v)
	}
	if v := versionString(&debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}); v != "v1.2.3" {
		t.Errorf("go install @v1.2.3: %q", v)
	}
}

// TestSmallOnes: help and argument errors a new user meets first.
func TestSmallOnes(t *testing.T) {
	help, _, _ := clrspyRun(t, "run", "--help")
	if strings.Contains(help, "--pid") || strings.Contains(help, "--name") || !strings.Contains(help, "--duration") {
		t.Errorf("run --help lists flags run refuses or lacks --duration:\n%s", help)
	}
	empty := filepath.Join(t.TempDir(), "empty.nettrace")
	os.WriteFile(empty, nil, 0o600)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"stat"}, "clrspy: stat needs a trace file (or '-' for standard input): clrspy stat FILE\n"},
		{[]string{"stat", empty}, "clrspy: " + empty + ": empty file\n"},
		{[]string{"gc", empty}, "clrspy: " + empty + ": empty file\n"},
		{[]string{"stat", "a", "b"}, "clrspy: one trace file at a time (got 2 arguments)\n"},
		{[]string{"gc"}, "clrspy: no target: give a .nettrace file, '-' for standard input, --pid, --name or -- COMMAND\n"},
	} {
		_, stderr, code := clrspyRun(t, c.args...)
		if code != 1 || stderr != c.want {
			t.Errorf("clrspy %v: exit %d, stderr %q; want 1, %q", c.args, code, stderr, c.want)
		}
	}
	var b bytes.Buffer
	writePs(&b, nil)
	if b.String() != "no .NET processes found (none runs, or diagnostics are disabled in all: DOTNET_EnableDiagnostics=0)\n" {
		t.Errorf("ps with no processes: %q", b.String())
	}
}
