package perf

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clrspy/clrspy/internal/workload"
)

// offCPUHelperEnv makes the test binary, re-executed as another user by
// TestOffCPUUnprivileged, profile a pid with off-CPU time asked for and
// print a helperResult (its init runs before TestMain's own helper).
const offCPUHelperEnv = "CLRSPY_OFFCPU_HELPER"

func init() {
	if os.Getenv(offCPUHelperEnv) == "" {
		return
	}
	pid, _ := strconv.Atoi(os.Getenv("CLRSPY_PERF_PID"))
	var h helperResult
	s, err := Start(pid, ProfileOptions{Options: Options{Hz: 99, OffCPU: true}})
	if err != nil {
		h.Err = err.Error()
	} else {
		fmt.Fprintln(os.Stderr, "sampling")
		select {
		case <-s.Done():
		case <-time.After(30 * time.Second):
		}
		prof, err := s.Stop()
		if err != nil {
			h.Err = err.Error()
		} else {
			h.Samples, h.Notes = prof.Total, prof.Notes
			if prof.OffCPU {
				h.Err = "the profile claims off-CPU time"
			}
		}
	}
	json.NewEncoder(os.Stdout).Encode(&h)
	os.Exit(0)
}

// TestOffCPUUnprivileged: as nobody, on its own process, --off-cpu gives
// the CPU profile and one note saying why off-CPU time is missing (at
// perf_event_paranoid 2: the tracepoint needs CAP_PERFMON or root;
// below, tracefs is root's).
func TestOffCPUUnprivileged(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("this test runs the workload and the profiler under another uid: it needs root")
	}
	par := readParanoid(t)
	dir, err := os.MkdirTemp("", "clrspy-offcpu-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	helper := filepath.Join(dir, "perf.test")
	if err := copyFile(self, helper); err != nil {
		t.Fatal(err)
	}
	nobody := &syscall.Credential{Uid: 65534, Gid: 65534, NoSetGroups: true}
	cmd := exec.Command(workload.Exe(t), "offcpu", "seconds=1", "wait=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: nobody}
	w := workload.StartCmd(t, cmd, []string{"HOME=/tmp", "TMPDIR=/tmp"})
	t.Setenv(offCPUHelperEnv, "1")
	h := runHelper(t, helper, nobody, w.Pid, func() { w.Release() })
	t.Logf("as nobody (paranoid %d): %+v", par, h)
	if h.Err != "" {
		t.Fatalf("as nobody: %s", h.Err)
	}
	want := "off-CPU time unavailable: the sched_switch tracepoint needs CAP_PERFMON or root (perf_event_paranoid is 2); CPU samples only"
	var got []string
	for _, n := range h.Notes {
		if strings.HasPrefix(n, "off-CPU time unavailable: ") {
			got = append(got, n)
		}
	}
	if len(got) != 1 || par == 2 && got[0] != want {
		t.Errorf("off-CPU notes %q, want one (at paranoid 2: %q)", got, want)
	}
	if h.Samples == 0 {
		t.Error("no CPU samples")
	}
	if _, err := w.Wait(30 * time.Second); err != nil {
		t.Fatal(err)
	}
}
