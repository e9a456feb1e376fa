package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clrspy/clrspy/internal/workload"
)

// TestRequestsStatusTakenOver: DiagnosticSource's specs are process-wide.
// The workload runs under `clrspy requests`; the requests served before a
// second session enables Microsoft-Diagnostics-DiagnosticSource with its
// own specs (another tool's: Hosting's request start as an Event) have
// their status (200, 404); those served while it holds the provider have
// none (null), and the report says another session holds it.
func TestRequestsStatusTakenOver(t *testing.T) {
	exe := workload.AspNetExe(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "requests.json")
	cmd := exec.Command(e2eBinary(t), "requests", "--json", "--slowest", "100", "-o", out, "--", exe, "gen2EveryMs=0")
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
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill() })
	var url string
	for deadline := time.Now().Add(60 * time.Second); url == ""; time.Sleep(50 * time.Millisecond) {
		if m := listening.FindStringSubmatch(stderr.String()); m != nil {
			url = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("the workload did not listen within 60 s:\n%s", stderr.String())
		}
	}
	get := func(path string, want int) {
		resp, err := http.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("GET %s: %d, want %d", path, resp.StatusCode, want)
		}
	}
	for _, p := range []string{"/alloc/1", "/nope/2", "/alloc/3"} {
		get(p, map[bool]int{true: 404, false: 200}[strings.HasPrefix(p, "/nope/")])
	}
	pid := readyPid.FindStringSubmatch(stderr.String())
	if pid == nil {
		t.Fatalf("no ready line:\n%s", stderr.String())
	}
	trace := filepath.Join(dir, "other.nettrace")
	rec := exec.Command(e2eBinary(t), "record", "--pid", pid[1], "-o", trace, "--providers",
		`Microsoft-Diagnostics-DiagnosticSource:0x3:5:FilterAndPayloadSpecs="Microsoft.AspNetCore/Microsoft.AspNetCore.Hosting.HttpRequestIn.Start"`)
	var recErr bytes.Buffer
	rec.Stderr = &recErr
	if err := rec.Start(); err != nil {
		t.Fatal(err)
	}
	waitForPartial(t, trace)
	time.Sleep(500 * time.Millisecond)
	for _, p := range []string{"/alloc/11", "/nope/12", "/alloc/13"} {
		get(p, map[bool]int{true: 404, false: 200}[strings.HasPrefix(p, "/nope/")])
	}
	rec.Process.Signal(syscall.SIGINT)
	if err := rec.Wait(); err != nil {
		t.Fatalf("record: %v\n%s", err, recErr.String())
	}
	io.WriteString(stdin, "stop\n")
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("clrspy requests: %v\n%s", err, tail([]byte(stderr.String())))
		}
	case <-time.After(60 * time.Second):
		t.Fatal("clrspy requests did not end")
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Slowest []struct {
			Path   string `json:"path"`
			Status *int   `json:"status"`
		} `json:"slowest"`
		Notes []string `json:"notes"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range d.Slowest {
		got[r.Path] = "null"
		if r.Status != nil {
			got[r.Path] = http.StatusText(*r.Status)
		}
	}
	want := map[string]string{"/alloc/1": "OK", "/nope/2": "Not Found", "/alloc/3": "OK", "/alloc/11": "null", "/nope/12": "null", "/alloc/13": "null"}
	for p, w := range want {
		if got[p] != w {
			t.Errorf("%s: status %s, want %s (all: %v)", p, got[p], w, got)
		}
	}
	note := ""
	for _, n := range d.Notes {
		if strings.Contains(n, "another session holds it") {
			note = n
		}
	}
	if note != "status unknown from then on: another session enabled Microsoft-Diagnostics-DiagnosticSource with specs of its own (1 times), which replaced clrspy's (they are process-wide, the last session's win: another session holds it)" {
		t.Errorf("notes %q: want the one that says another session holds DiagnosticSource", d.Notes)
	}
}
