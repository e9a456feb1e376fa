package main

import (
	"encoding/json"
	"fmt"
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
		{[]string{"requests", "--no-status", "x.nettrace"}, "--no-status applies to live sessions"},
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
	// JSON and CSV: every row has the count (the fixture's 11 GCs hit 21
	// requests in flight in all, GC 15 five of them); none without
	// request events.
	stdout, _, err = runCaptured(t, "gc", "--json", path)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		GCs []struct {
			Number      uint32 `json:"number"`
			RequestsHit *int64 `json:"requests_hit"`
		} `json:"gcs"`
	}
	if err := json.Unmarshal(stdout, &d); err != nil {
		t.Fatal(err)
	}
	var sum, gc15 int64
	for _, g := range d.GCs {
		if g.RequestsHit == nil {
			t.Fatalf("GC %d: no requests_hit", g.Number)
		}
		sum += *g.RequestsHit
		if g.Number == 15 {
			gc15 = *g.RequestsHit
		}
	}
	if len(d.GCs) != 11 || sum != 21 || gc15 != 5 {
		t.Errorf("%d GC rows, %d requests hit in all, GC 15 %d: want 11, 21, 5", len(d.GCs), sum, gc15)
	}
	stdout, _, err = runCaptured(t, "gc", "--csv", path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(stdout)), "\n")
	if !strings.HasSuffix(lines[0], ",RequestsHit") || len(lines) != 12 || !strings.HasPrefix(lines[8], "15,") || !strings.HasSuffix(lines[8], ",5") {
		t.Errorf("CSV:\n%s", stdout)
	}
	for _, args := range [][]string{{"gc", "--json", "../../testdata/traces/gc-induced.nettrace"}, {"gc", "--csv", "../../testdata/traces/gc-induced.nettrace"}} {
		stdout, _, err = runCaptured(t, args...)
		if err != nil || strings.Contains(string(stdout), "requests_hit") || strings.Contains(string(stdout), "RequestsHit") {
			t.Errorf("%v: %v", args, err)
		}
	}
}

// TestRequestsSession: the requests session forwards Hosting's request
// stop through DiagnosticSource with clrspy's specs (quoted: they hold
// ';'), and --no-status leaves the provider out.
func TestRequestsSession(t *testing.T) {
	find := func(noStatus bool) string {
		s, _ := requestsSet(false, noStatus, 1)
		for _, p := range s.Providers() {
			if p.Name == "Microsoft-Diagnostics-DiagnosticSource" {
				return fmt.Sprintf("%#x/%d/%s", p.Keywords, p.Level, p.Args)
			}
		}
		return ""
	}
	want := "0x3/5/FilterAndPayloadSpecs=\"Microsoft.AspNetCore/Microsoft.AspNetCore.Hosting.HttpRequestIn:-\n" +
		"Microsoft.AspNetCore/Microsoft.AspNetCore.Hosting.HttpRequestIn.Start:-\n" +
		"Microsoft.AspNetCore/Microsoft.AspNetCore.Hosting.HttpRequestIn.Stop@Activity1Stop:-TraceIdentifier;Response.StatusCode\""
	if got := find(false); got != want {
		t.Errorf("DiagnosticSource %q, want %q", got, want)
	}
	if got := find(true); got != "" {
		t.Errorf("--no-status: DiagnosticSource %q", got)
	}
}

// TestGCLogRequestsFrozen: `clrspy gc --log` on the requests fixture: each
// pause's log line after the first request says how many requests it
// froze, the requests_hit of its row (GCs 10 to 18 of the fixture: 1, 3,
// 3, 3, 2, 5, 4, 0, 0); the two GCs before any request event have none;
// --requests is for live sessions.
func TestGCLogRequestsFrozen(t *testing.T) {
	path := gunzipTrace(t, "requests.nettrace.gz", t.TempDir(), 0)
	_, stderr, err := runCaptured(t, "gc", "--log", "--log-json", "--level", "debug", path)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(string(stderr)), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) != nil || m["msg"] != "GC pause" {
			continue
		}
		n, ok := m["requests_frozen"].(float64)
		if !ok {
			got = append(got, fmt.Sprintf("%v:-", m["gc"]))
		} else {
			got = append(got, fmt.Sprintf("%v:%v", m["gc"], n))
		}
	}
	if want := "8:- 9:- 10:1 11:3 12:3 13:3 14:2 15:5 16:4 17:0 18:0"; strings.Join(got, " ") != want {
		t.Errorf("log lines %q, want %q", strings.Join(got, " "), want)
	}
	_, _, err = runCaptured(t, "gc", "--requests", path)
	if err == nil || !strings.Contains(err.Error(), "--requests applies to live sessions") {
		t.Errorf("gc --requests FILE: %v", err)
	}
}
