package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/nettrace"
)

const traces = "../../../shared/traces"

// runCLI runs clrspy in-process and returns stdout and the error.
func runCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

// runCaptured runs clrspy in-process with os.Stdout and os.Stderr pointed
// at files: a launched program's own output passes through clrspy's
// standard streams, so it is captured too.
func runCaptured(t *testing.T, args ...string) (stdout, stderr []byte, err error) {
	t.Helper()
	dir := t.TempDir()
	so, cerr := os.Create(filepath.Join(dir, "stdout"))
	if cerr != nil {
		t.Fatal(cerr)
	}
	se, cerr := os.Create(filepath.Join(dir, "stderr"))
	if cerr != nil {
		t.Fatal(cerr)
	}
	oldOut, oldErr := os.Stdout, os.Stderr
	os.Stdout, os.Stderr = so, se
	root := newRootCmd()
	root.SetArgs(args)
	err = root.Execute()
	os.Stdout, os.Stderr = oldOut, oldErr
	so.Close()
	se.Close()
	stdout, _ = os.ReadFile(so.Name())
	stderr, _ = os.ReadFile(se.Name())
	return stdout, stderr, err
}

func TestStatJSON(t *testing.T) {
	out, err := runCLI(t, "stat", "--json", filepath.Join(traces, "perfview__eventpipe-dotnetcore3.0-win-x64-objver4.nettrace"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Header struct {
			PointerSize   int    `json:"pointer_size"`
			ProcessID     int    `json:"process_id"`
			QPCFrequency  int64  `json:"qpc_frequency"`
			SyncTimeUTC   string `json:"sync_time_utc"`
			FormatVersion int    `json:"format_version"`
		} `json:"header"`
		Events []struct {
			Provider  string `json:"provider"`
			ID        int    `json:"id"`
			Version   int    `json:"version"`
			Name      string `json:"name"`
			Count     int    `json:"count"`
			WithStack int    `json:"with_stack"`
		} `json:"event_counts"`
		LostEvents *int  `json:"events_lost"`
		Truncated  *bool `json:"truncated"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("stat --json output is not JSON: %v\n%s", err, out)
	}
	h := doc.Header
	if h.PointerSize != 8 || h.ProcessID != 10064 || h.QPCFrequency != 3124099 ||
		h.SyncTimeUTC != "2019-06-15T23:56:59.754Z" || h.FormatVersion != 4 {
		t.Errorf("header %+v", h)
	}
	if doc.LostEvents == nil || *doc.LostEvents != 0 || doc.Truncated == nil || *doc.Truncated {
		t.Errorf("events_lost/truncated missing or wrong")
	}
	found := 0
	for _, e := range doc.Events {
		switch {
		case e.Name == "GC/Start" && e.Count == 478 && e.Version == 2 && e.WithStack == 0:
			found++
		case e.Name == "GC/AllocationTick" && e.Count == 35458 && e.Version == 3 && e.WithStack == 35457:
			found++
		case e.Provider == "Microsoft-DotNETCore-SampleProfiler" && e.ID == 0 && e.Count == 35161 && e.WithStack == 35161:
			found++
		}
	}
	if found != 3 {
		t.Errorf("expected GC/Start 478, AllocationTick v3 35458 and 35161 samples; got %+v", doc.Events)
	}
	tracetest.Golden(t, "stat_objver4.json", []byte(out))
}

func TestStatText(t *testing.T) {
	out, err := runCLI(t, "stat", filepath.Join(traces, "diagnostics__trace.nettrace"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"events        19911 (8126 with a stack)",
		"TRUNCATED     trace truncated at offset 4170673",
		"GC/BulkMovedObjectRanges (2496 of 3586 payload bytes present)",
		"    385           0    1    2 Microsoft-Windows-DotNETRuntime/GC/Start\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	tracetest.Golden(t, "stat_diagnostics.txt", []byte(out))
}

func TestStatStdin(t *testing.T) {
	f, err := os.Open(filepath.Join(traces, "filtrace__alloc.nettrace"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	old := os.Stdin
	os.Stdin = f
	defer func() { os.Stdin = old }()
	out, err := runCLI(t, "stat", "--json", "-")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, `"events": 3783`) || !strings.Contains(out, `"source": "stdin"`) {
		t.Errorf("stdin stat:\n%s", out)
	}
}

// TestStatBadInputs: every bad input is one clear line, never a panic.
func TestStatBadInputs(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.nettrace")
	os.WriteFile(garbage, []byte("this is not a trace at all, just text\n"), 0o644)
	empty := filepath.Join(dir, "empty.nettrace")
	os.WriteFile(empty, nil, 0o644)
	short := filepath.Join(dir, "six.txt") // shorter than any header, and not the start of one
	os.WriteFile(short, []byte("hello\n"), 0o644)
	cut := filepath.Join(dir, "cut.nettrace") // the start of a nettrace header: cut, not foreign
	os.WriteFile(cut, []byte("Nett"), 0o644)
	cases := []struct {
		arg, want string
	}{
		{filepath.Join(dir, "missing.nettrace"), "missing.nettrace: no such file"},
		{dir, "is a directory, not a trace file"},
		{garbage, "garbage.nettrace: not a trace: starts with 74 68 69 73 20 69 73 20, not a nettrace or netperf stream"},
		{short, "six.txt: not a trace: 6 bytes (68 65 6c 6c 6f 0a), not the start of a nettrace or netperf stream"},
		{cut, "cut.nettrace: trace truncated at offset 0 (inside stream header)"},
		{empty, "empty.nettrace: empty file"},
		{filepath.Join(traces, "unsupported/perfview__eventpipe-dotnetcore2.0-win-x86.netperf"),
			"unsupported trace format NetPerf V2"},
	}
	for _, c := range cases {
		_, err := runCLI(t, "stat", c.arg)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("stat %s: err = %v, want one line containing %q", c.arg, err, c.want)
		}
	}
}

// A trace whose GC/Start events a later runtime wrote as v3 (the gc-wks
// fixture rewritten with that version): stat names them, with the version
// clrspy reads, in the text and the JSON.
func TestStatNewerVersion(t *testing.T) {
	r := tracetest.Open(t, "gc-wks.nettrace", nettrace.NewReader)
	var buf bytes.Buffer
	w, err := nettrace.NewWriter(&buf, *r.Header(), nettrace.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bumped := map[*nettrace.Metadata]*nettrace.Metadata{}
	if err := tracetest.ReadAll(t, r, func(ev *nettrace.Event) {
		e := *ev
		if m := ev.Meta; m.Runtime == nettrace.Runtime && m.EventID == clrevents.IDGCStart {
			if bumped[m] == nil {
				c := *m
				c.Version = 3
				bumped[m] = &c
			}
			e.Meta = bumped[m]
		}
		if err := w.WriteEvent(&e); err != nil {
			t.Fatal(err)
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "v3.nettrace")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := runCLI(t, "stat", path)
	if err != nil {
		t.Fatal(err)
	}
	if want := "NEWER         GC/Start v3 (40 events): clrspy reads v2, the fields added since are not read"; !strings.Contains(out, want) {
		t.Fatalf("no %q in:\n%s", want, out)
	}
	out, err = runCLI(t, "stat", "--json", path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Newer []struct {
			Name           string `json:"name"`
			Version        uint32 `json:"version"`
			DecoderVersion uint32 `json:"decoder_version"`
			Count          uint64 `json:"count"`
		} `json:"newer_versions"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Newer) != 1 || doc.Newer[0].Name != "GC/Start" || doc.Newer[0].Version != 3 || doc.Newer[0].DecoderVersion != 2 || doc.Newer[0].Count != 40 {
		t.Fatalf("newer_versions %+v, want GC/Start v3 read as v2, 40 events", doc.Newer)
	}
	// The fixture itself has none.
	out, err = runCLI(t, "stat", tracetest.Path(t, "gc-wks.nettrace"))
	if err != nil || strings.Contains(out, "NEWER") {
		t.Fatalf("NEWER on the fixture itself (%v):\n%s", err, out)
	}
}
