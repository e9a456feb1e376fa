package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clrspy/clrspy/internal/workload"
)

// TestGCLiveRequestsFrozen launches the ASP.NET Core workload under
// `clrspy gc --requests` (an induced blocking gen2 every 300 ms), drives
// it with wrk, and reads the pause log: every GC pause line says how many
// requests it froze, and that count (made as the GC ends: the requests it
// hit that completed and those open that began before it ended) equals
// the requests_hit of the GC's row in the final report (made once they all
// completed) for all GCs but those that froze a request still open at the
// end (none here: the load ends two seconds before the workload).
func TestGCLiveRequestsFrozen(t *testing.T) {
	wrk, err := exec.LookPath("wrk")
	if err != nil {
		t.Fatal("wrk is not installed (.ci/run installs the Debian package)")
	}
	exe := workload.AspNetExe(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "gc.json")
	script := filepath.Join(dir, "routes.lua")
	if err := os.WriteFile(script, []byte(`local paths = {"/alloc/1", "/lock/2", "/call/3"}
local i = 0
request = function()
  i = i + 1
  return wrk.format("GET", paths[(i % 3) + 1])
end
`), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(e2eBinary(t), "gc", "--requests", "--json", "--log-json", "--level", "debug", "-o", out, "--", exe, "gen2EveryMs=300", "holdMs=2", "backendMs=3")
	var stdout bytes.Buffer
	var stderr workload.LockedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	cmd.WaitDelay = 5 * time.Second
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		select {
		case <-exited:
		default:
			cmd.Process.Kill()
			<-exited
		}
	})
	var url string
	for deadline := time.Now().Add(60 * time.Second); url == ""; time.Sleep(50 * time.Millisecond) {
		if m := listening.FindStringSubmatch(stderr.String()); m != nil {
			url = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("the workload did not listen within 60 s:\n%s", stderr.String())
		}
	}
	if load, err := exec.Command(wrk, "-t2", "-c8", "-d3s", "-s", script, url).CombinedOutput(); err != nil {
		t.Fatalf("wrk: %v\n%s", err, load)
	}
	time.Sleep(2 * time.Second) // the requests wrk abandoned are still served
	io.WriteString(stdin, "stop\n")
	select {
	case <-exited:
		if waitErr != nil {
			t.Fatalf("clrspy gc: %v\n%s", waitErr, tail([]byte(stderr.String())))
		}
	case <-time.After(90 * time.Second):
		t.Fatalf("clrspy gc did not end 90 s after the workload was told to stop")
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		GCs []struct {
			Number      uint32 `json:"number"`
			RequestsHit *int64 `json:"requests_hit"`
		} `json:"gcs"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	hit := map[uint32]int64{}
	for _, g := range d.GCs {
		if g.RequestsHit == nil {
			t.Fatalf("GC %d: no requests_hit in the report", g.Number)
		}
		hit[g.Number] = *g.RequestsHit
	}
	var lines, with, equal int
	var frozen int64
	for _, l := range strings.Split(stderr.String(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) != nil || m["msg"] != "GC pause" {
			continue
		}
		lines++
		n, ok := m["requests_frozen"].(float64)
		if !ok {
			continue // before the first request event
		}
		with++
		frozen += int64(n)
		gc := uint32(m["gc"].(float64))
		if h, ok := hit[gc]; ok && h == int64(n) {
			equal++
		} else {
			t.Logf("GC %d: the log says %v requests frozen, the report %d hit", gc, n, hit[gc])
		}
	}
	t.Logf("%d GC pause lines, %d with requests_frozen (%d in all), %d equal to the report's requests_hit", lines, with, frozen, equal)
	if with < 5 || frozen == 0 || equal != with {
		t.Errorf("%d of %d pause lines say the requests frozen (%d in all), %d of them the report's count", with, lines, frozen, equal)
	}
}
