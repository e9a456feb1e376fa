package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestRequestsBadInput: bad flags and inputs are one-line errors.
func TestRequestsBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"requests", "--slowest", "0", "x.nettrace"}, "--slowest 0: want 1 or more"},
		{[]string{"requests", "--no-flow", "x.nettrace"}, "--no-flow applies to live sessions"},
		{[]string{"requests", "/nonexistent/x.nettrace"}, "no such file"},
	} {
		_, _, err := runCaptured(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: %v, want one line with %q", c.args, err, c.want)
		}
	}
}

// TestRequestsFixtureJSON: on the requests fixture (gunzipped) the JSON
// document has the contract's keys with the fixture's figures: 406
// requests over four routes, 102 outgoing calls among the slowest
// listed, every GC pause of the session.
func TestRequestsFixtureJSON(t *testing.T) {
	path := gunzipTrace(t, "requests.nettrace.gz", t.TempDir(), 0)
	stdout, _, err := runCaptured(t, "requests", "--json", "--slowest", "1000", path)
	if err != nil {
		t.Fatal(err)
	}
	var d requestsDoc
	if err := json.Unmarshal(stdout, &d); err != nil {
		t.Fatal(err)
	}
	calls := 0
	for _, r := range d.Slowest {
		calls += r.HTTPOutCount
	}
	if d.RequestsTotal != 406 || len(d.Routes) != 4 || len(d.Slowest) != 406 || calls != 102 || len(d.Pauses) != 11 || !d.ActivityFlow || d.OpenAtEnd != 0 {
		t.Errorf("requests %d, routes %d, listed %d, calls %d, pauses %d, flow %v, open %d", d.RequestsTotal, len(d.Routes), len(d.Slowest), calls, len(d.Pauses), d.ActivityFlow, d.OpenAtEnd)
	}
	var in int64
	for _, p := range d.Pauses {
		in += p.InFlight
	}
	if in == 0 || d.HitByPause == 0 || d.HitByPause > in {
		t.Errorf("%d requests hit, %d in flight over the pauses", d.HitByPause, in)
	}
}

// TestGCRequestsHit: `clrspy gc` on a file with request events adds the
// requests each of the longest pauses hit, the in_flight of `clrspy
// requests` for the same GC (GC 15 of the fixture froze 5); a file without
// them has no such column.
func TestGCRequestsHit(t *testing.T) {
	path := gunzipTrace(t, "requests.nettrace.gz", t.TempDir(), 0)
	stdout, _, err := runCaptured(t, "gc", path)
	if err != nil {
		t.Fatal(err)
	}
	row := ""
	for _, l := range strings.Split(string(stdout), "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] == "15" {
			row = l
		}
	}
	if !strings.Contains(string(stdout), "requests hit") || !strings.HasSuffix(strings.TrimSpace(row), " 5") {
		t.Errorf("GC 15's row %q in:\n%s", row, stdout)
	}
	stdout, _, err = runCaptured(t, "gc", "../../testdata/traces/gc-induced.nettrace")
	if err != nil || strings.Contains(string(stdout), "requests hit") {
		t.Errorf("gc-induced: %v\n%s", err, stdout)
	}
}
