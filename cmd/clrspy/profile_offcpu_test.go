package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/internal/workload"
)

// TestProfileOffCPULaunch: `profile --sampler perf --off-cpu -- CMD` on
// the offcpu workload (seconds=2) writes folded stacks weighed in
// nanoseconds (wall: CPU and off-CPU time). The pipe reader's stacks,
// through its measured window down libc's read into the kernel's pipe
// read, hold the time the workload measured inside its reads (its
// work.pipe.blockedMs, printed on the workload's stdout) within 5 %;
// the summary gives the off-CPU total.
func TestProfileOffCPULaunch(t *testing.T) {
	out := filepath.Join(t.TempDir(), "offcpu.folded")
	stdout, stderr, err := runCaptured(t, append([]string{"profile", "--sampler", "perf", "--off-cpu", "--format", "folded", "-o", out, "--"},
		workload.Argv(t, "offcpu", "seconds=2")...)...)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	pipe := regexp.MustCompile(`OffCpuThreads\.Window\(.*;read;(.*;)?(anon_)?pipe_read;`)
	var ns int64
	for _, line := range strings.Split(string(b), "\n") {
		i := strings.LastIndexByte(line, ' ')
		if i < 0 || !pipe.MatchString(line[:i]) {
			continue
		}
		v, err := strconv.ParseInt(line[i+1:], 10, 64)
		if err != nil {
			t.Fatalf("folded line %q: %v", line, err)
		}
		ns += v
	}
	t.Logf("pipe reader: %.3f s under Window → read → pipe_read; %s", float64(ns)/1e9, strings.TrimSpace(string(stderr)))
	var res struct {
		Work struct {
			Pipe struct {
				BlockedMs float64 `json:"blockedMs"`
			} `json:"pipe"`
		} `json:"work"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(stdout), &res); err != nil || res.Work.Pipe.BlockedMs <= 0 {
		t.Fatalf("the workload's result %q: %v", stdout, err)
	}
	if got, want := float64(ns)/1e6, res.Work.Pipe.BlockedMs; math.Abs(got-want) > 0.05*want {
		t.Errorf("pipe reader: %.1f ms off the CPU under read, the workload measured %.1f ms in its reads", got, want)
	}
	if !strings.Contains(string(stderr), "; off the CPU: ") {
		t.Errorf("summary without the off-CPU total: %s", stderr)
	}
}

func TestProfileOffCPUErrors(t *testing.T) {
	_, err := runCLI(t, "profile", "--sampler", "eventpipe", "--off-cpu", "--pid", "1")
	if want := "--off-cpu needs the perf sampler (--sampler perf or auto); the EventPipe sampler is a wall clock of managed threads already"; err == nil || err.Error() != want {
		t.Errorf("%v, want %q", err, want)
	}
}
