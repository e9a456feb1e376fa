package main

import (
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
// read, hold its window: at least 1.9 s (the 2 s loop ends with the
// read that crosses 2 s) and at most 2.4 s (the window plus slack of a
// loaded machine); the summary gives the off-CPU total.
func TestProfileOffCPULaunch(t *testing.T) {
	out := filepath.Join(t.TempDir(), "offcpu.folded")
	_, stderr, err := runCaptured(t, append([]string{"profile", "--sampler", "perf", "--off-cpu", "--format", "folded", "-o", out, "--"},
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
	if ns < 1.9e9 || ns > 2.4e9 {
		t.Errorf("pipe reader: %.3f s off the CPU under read, want 1.9–2.4 s", float64(ns)/1e9)
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
