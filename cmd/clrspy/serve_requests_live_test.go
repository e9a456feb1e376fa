package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clrspy/clrspy/internal/workload"
)

// TestServeRequests runs the ASP.NET Core workload, attaches serve to it
// before any request, drives it with wrk over its three routes and, once
// the workload exited (its session ended: every event read), compares
// serve's request series with what the workload's outermost middleware
// counted: clrspy_requests_total per route exactly, the duration
// histogram's count equal to it, every request the workload saw paused
// among clrspy_requests_hit_by_gc_total (less 2 %, as TestRequestsLive
// explains: a request can start inside a suspension before the runtime's
// clock read) and the paused time at least 90 % of the workload's own
// GC.GetTotalPauseDuration deltas, less 0.2 ms per request so hit; and
// serve's pause log says how many requests each GC froze, and its /triage
// over two seconds of the load has the requests finding.
func TestServeRequests(t *testing.T) {
	wrk, err := exec.LookPath("wrk")
	if err != nil {
		t.Fatal("wrk is not installed (.ci/run installs the Debian package)")
	}
	exe := workload.AspNetExe(t)
	script := filepath.Join(t.TempDir(), "routes.lua")
	if err := os.WriteFile(script, []byte(`local paths = {"/alloc/1", "/lock/2", "/call/3"}
local i = 0
request = function()
  i = i + 1
  return wrk.format("GET", paths[(i % 3) + 1])
end
`), 0o644); err != nil {
		t.Fatal(err)
	}
	app := exec.Command(exe, "gen2EveryMs=300", "holdMs=2", "backendMs=3")
	var stdout bytes.Buffer
	var stderr workload.LockedBuffer
	app.Stdout, app.Stderr = &stdout, &stderr
	stdin, err := app.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Start(); err != nil {
		t.Fatal(err)
	}
	app.WaitDelay = 5 * time.Second
	exited := make(chan error, 1)
	go func() { exited <- app.Wait() }()
	t.Cleanup(func() { app.Process.Kill() })
	var url string
	for deadline := time.Now().Add(60 * time.Second); url == ""; time.Sleep(50 * time.Millisecond) {
		if m := listening.FindStringSubmatch(stderr.String()); m != nil {
			url = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("the workload did not listen within 60 s:\n%s", stderr.String())
		}
	}
	pid := app.Process.Pid
	s := startServe(t, "--pid", strconv.Itoa(pid), "--level", "debug", "--log-json")
	s.waitState(t, pid, "running", 30*time.Second)
	// serve's /triage over two seconds of the load: the requests finding
	// of clrspy triage, from the always-on session's request events.
	triaged := make(chan []byte, 1)
	go func() {
		time.Sleep(500 * time.Millisecond)
		triaged <- httpGet(t, "http://"+s.addr+"/triage?pid="+strconv.Itoa(pid)+"&seconds=2")
	}()
	load, err := exec.Command(wrk, "-t2", "-c8", "-d3s", "-s", script, url).CombinedOutput()
	if err != nil {
		t.Fatalf("wrk: %v\n%s", err, load)
	}
	var tr triageDoc
	if err := json.Unmarshal(<-triaged, &tr); err != nil {
		t.Fatalf("/triage: %v", err)
	}
	if q := tr.Facts.Requests; q == nil || q.Requests < 100 || q.HitByGC == 0 || q.HitPct < 1 {
		t.Errorf("/triage's request facts %+v: want 100 requests or more, 1 %% or more hit by a GC", q)
	} else {
		found := false
		for _, f := range tr.Findings {
			if f.Rule == "gc.requests_hit_pct" && strings.HasPrefix(f.Title, fmt.Sprintf("GC pauses hit %.1f%% of requests (%d of %d;", q.HitPct, q.HitByGC, q.Requests)) {
				found = true
			}
		}
		if !found {
			t.Errorf("/triage has no gc.requests_hit_pct finding for %d of %d requests hit: %+v", q.HitByGC, q.Requests, tr.Findings)
		}
		t.Logf("/triage: %d requests, %d hit (%.1f %%)", q.Requests, q.HitByGC, q.HitPct)
	}
	// The requests wrk abandoned are still served (TestRequestsLive).
	time.Sleep(2 * time.Second)
	stdin.Write([]byte("stop\n"))
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("workload: %v\n%s", err, tail([]byte(stderr.String())))
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the workload did not stop within 60 s")
	}
	s.waitState(t, pid, "exited", 30*time.Second)
	wl, err := workload.ParseResult(stdout.Bytes())
	if err != nil {
		t.Fatalf("%v\n%s", err, tail([]byte(stderr.String())))
	}
	own, counts := ownRequests(t, wl)

	series := scrapeRoutes(t, s)
	var total, hit int64
	var paused float64
	for name, want := range counts {
		r, ok := series["/"+name]
		if !ok {
			for k, v := range series {
				if strings.HasPrefix(k, "/"+name+"/") {
					r, ok = v, true
				}
			}
		}
		if !ok || r.count != want || r.durations != want {
			t.Errorf("route %s: clrspy_requests_total %d, duration histogram count %d; the workload counted %d (series %v)", name, r.count, r.durations, want, series)
		}
		total += r.count
		hit += r.hit
		paused += r.paused
	}
	if len(series) != len(counts) {
		t.Errorf("%d routes in /metrics, the workload has %d: %v", len(series), len(counts), series)
	}
	var ownHit int64
	var ownPaused float64
	for _, o := range own {
		if o.PauseMs > 0 {
			ownHit++
			ownPaused += o.PauseMs / 1e3
		}
	}
	if int64(len(own)) != total || ownHit == 0 || hit < ownHit-max(ownHit/50, 2) || hit > total {
		t.Errorf("clrspy: %d requests, %d hit by a GC; the workload: %d requests, %d paused", total, hit, len(own), ownHit)
	}
	if paused < 0.9*ownPaused-0.0002*float64(ownHit) {
		t.Errorf("clrspy_request_gc_paused_seconds_total %.4f s, the workload's own deltas %.4f s", paused, ownPaused)
	}
	t.Logf("%d requests (%d routes), %d hit by a GC (the workload: %d), paused %.1f ms (the workload's deltas %.1f ms)", total, len(series), hit, ownHit, paused*1e3, ownPaused*1e3)

	// The pause log: each GC's line says how many requests it froze; a
	// request two GCs hit counts in both lines, so they add up to at least
	// the requests hit.
	var lines, with int
	var frozen int64
	for _, l := range strings.Split(s.stderr.String(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) != nil || m["msg"] != "GC pause" {
			continue
		}
		lines++
		if n, ok := m["requests_frozen"].(float64); ok {
			with++
			frozen += int64(n)
		}
	}
	t.Logf("%d GC pause lines, %d with requests_frozen, %d requests frozen in all", lines, with, frozen)
	if with < 5 || with < lines-2 || frozen < hit {
		t.Errorf("%d of %d GC pause lines say the requests frozen, %d in all; %d requests hit", with, lines, frozen, hit)
	}
}

type routeSeries struct {
	count, hit, durations int64
	paused                float64
}

var routeSeriesRE = regexp.MustCompile(`^(clrspy_requests_total|clrspy_requests_hit_by_gc_total|clrspy_request_gc_paused_seconds_total|clrspy_request_duration_seconds_count)\{.*method="GET".*route="([^"]*)".*\} (\S+)$`)

// scrapeRoutes reads serve's request series by route (one process, GET).
func scrapeRoutes(t *testing.T, s *serveProc) map[string]routeSeries {
	t.Helper()
	m := map[string]routeSeries{}
	sc := bufio.NewScanner(bytes.NewReader(httpGet(t, "http://"+s.addr+"/metrics")))
	for sc.Scan() {
		g := routeSeriesRE.FindStringSubmatch(sc.Text())
		if g == nil {
			continue
		}
		v, err := strconv.ParseFloat(g[3], 64)
		if err != nil {
			t.Fatalf("%q: %v", sc.Text(), err)
		}
		r := m[g[2]]
		switch g[1] {
		case "clrspy_requests_total":
			r.count = int64(v)
		case "clrspy_requests_hit_by_gc_total":
			r.hit = int64(v)
		case "clrspy_request_gc_paused_seconds_total":
			r.paused = v
		default:
			r.durations = int64(v)
		}
		m[g[2]] = r
	}
	return m
}
