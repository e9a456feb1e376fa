package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/clrspy/clrspy/internal/workload"
	"github.com/clrspy/clrspy/triage"
)

// judged is a finding as the surfaces are compared on: its rule (the
// threshold key; the area for an area's info line) and severity.
func judged(fs []triage.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, fmt.Sprintf("%s %s", cmp.Or(f.Rule, string(f.Area)), f.Severity))
	}
	slices.Sort(out)
	return out
}

// TestTriageSurfacesAgree: one real process judged over the same window
// by `clrspy triage --pid` (a session of its own) and by serve's /triage
// (the window of serve's always-on session through the same analyses)
// gives the same findings: the same rule ids at the same severities. The
// workload (gclock) is steadily far past three thresholds whatever the
// load: a GC.Collect(2) every 500 ms (120 induced and blocking gen2 GCs a
// minute, critical from 20 and 30) and six threads taking one lock held
// 50 ms (five of them waiting at any time: ~80 % of their time, critical
// from 25 % of the threads'), and far below the others (its pauses a few
// ms a second, its CPU mostly asleep).
func TestTriageSurfacesAgree(t *testing.T) {
	dir := t.TempDir()
	path, name := aliasWorkload(t, dir, "TrS")
	s := startServe(t, "--name", name, "--counter-interval", "1s", "--level", "warn")
	p := workload.StartCmd(t, exec.Command(path, "gclock", "seconds=20", "wait=1"), nil)
	s.waitState(t, p.Pid, "running", 30*time.Second)
	p.Release()
	time.Sleep(2 * time.Second) // past the threads' start
	pid := strconv.Itoa(p.Pid)
	type answer struct {
		body []byte
		err  error
	}
	served := make(chan answer, 1)
	go func() {
		resp, err := http.Get("http://" + s.addr + "/triage?pid=" + pid + "&seconds=6")
		if err != nil {
			served <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err == nil && resp.StatusCode != 200 {
			err = fmt.Errorf("%s: %s", resp.Status, b)
		}
		served <- answer{b, err}
	}()
	out, errOut, code := clrspyRun(t, "triage", "--pid", pid, "--duration", "6s", "--json")
	if code != 0 {
		t.Fatalf("triage: exit %d\n%s", code, errOut)
	}
	a := <-served
	if a.err != nil {
		t.Fatalf("/triage: %v", a.err)
	}
	var cli, srv triageDoc
	if err := json.Unmarshal([]byte(out), &cli); err != nil {
		t.Fatalf("triage --json: %v\n%s", err, out)
	}
	if err := json.Unmarshal(a.body, &srv); err != nil {
		t.Fatalf("/triage: %v\n%s", err, a.body)
	}
	jc, js := judged(cli.Findings), judged(srv.Findings)
	t.Logf("judged: %v", jc)
	for _, want := range []string{"gc.induced_per_min critical", "gc.gen2_blocking_per_min critical", "locks.wait_pct critical"} {
		if !slices.Contains(jc, want) {
			t.Errorf("triage --pid has no %q: %v", want, jc)
		}
	}
	if !slices.Equal(jc, js) {
		t.Errorf("triage --pid judged %v\nserve's /triage judged %v", jc, js)
	}
	// The figures behind them agree too: the GC.Collect calls of ~6 s
	// (one every 500 ms plus the GC's time: 8 to 13 in each window).
	for _, d := range []*triageDoc{&cli, &srv} {
		if g := d.Facts.GC; g.Induced < 8 || g.Induced > 13 || g.Gen2Blocking < g.Induced {
			t.Errorf("induced %d, blocking gen2 %d in a 6 s window of a GC.Collect(2) every 500 ms", g.Induced, g.Gen2Blocking)
		}
	}
	if t.Failed() {
		t.Logf("triage --pid facts: %+v\nserve's facts: %+v", cli.Facts, srv.Facts)
	}
	if _, err := p.Wait(60 * time.Second); err != nil {
		t.Fatal(err)
	}
}
