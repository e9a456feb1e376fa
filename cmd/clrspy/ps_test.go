package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clrspy/clrspy/internal/plant"
	"github.com/clrspy/clrspy/internal/workload"
)

// startTicksOf is field 22 of /proc/PID/stat, the start time the runtime
// puts in its socket's name.
func startTicksOf(t *testing.T, pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	return f[19] // field 22; fields after comm start at 3
}

// TestPsNotAnswering: a real process whose diagnostics socket accepts
// connections and never replies (issue 27: ps took 27.7 s, 30 s per mute
// process, and lost a process that answered) is listed as "not answering"
// inside the aligned table; a .NET process that answers is listed with its
// runtime; ps ends within 3 s (its per-process timeout is 2 s, asked in
// parallel; 1 s is left for starting the binary and reading /proc on a
// loaded machine).
func TestPsNotAnswering(t *testing.T) {
	ok := workload.Start(t, nil, "idle", "seconds=60", "stdin=1")
	defer ok.Release()
	// The mute listener is this test binary (internal/plant), a real
	// process; its socket is moved under the name a runtime of its pid
	// and start time would use, in /tmp (it has no TMPDIR).
	tmp := filepath.Join("/tmp", fmt.Sprintf("clrspy-mute-%d.sock", os.Getpid()))
	l := plant.Listen(t, tmp, os.Geteuid(), os.Getegid())
	mute := l.Pid()
	sock := fmt.Sprintf("/tmp/dotnet-diagnostic-%d-%s-socket", mute, startTicksOf(t, mute))
	if err := os.Rename(tmp, sock); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(sock) })
	e2eBinary(t) // built before the clock starts
	start := time.Now()
	stdout, stderr, code := clrspyRun(t, "ps")
	took := time.Since(start)
	if code != 0 {
		t.Fatalf("ps: exit %d: %s", code, stderr)
	}
	t.Logf("ps took %v", took.Round(time.Millisecond))
	if took > 3*time.Second {
		t.Errorf("ps took %v with one mute process, want at most 3 s", took)
	}
	if !regexp.MustCompile(`(?m)^` + strconv.Itoa(mute) + ` +\S+ +not answering +- `).MatchString(stdout) {
		t.Errorf("the mute pid %d is not a \"not answering\" row of the table:\n%s", mute, stdout)
	}
	if !regexp.MustCompile(`(?m)^` + strconv.Itoa(ok.Pid) + ` +Workload +10\.`).MatchString(stdout) {
		t.Errorf("the answering workload %d is not listed with its runtime:\n%s", ok.Pid, stdout)
	}
	// The table's columns line up: the mute row's RUNTIME starts where the
	// header's does.
	header := strings.Index(stdout, "RUNTIME")
	for _, line := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(line, strconv.Itoa(mute)+" ") {
			if i := strings.Index(line, "not answering"); i != header {
				t.Errorf("\"not answering\" at column %d, RUNTIME at %d", i, header)
			}
		}
	}
	js, _, _ := clrspyRun(t, "ps", "--json")
	var l2 []psEntry
	if err := json.Unmarshal([]byte(js), &l2); err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, e := range l2 {
		if e.Pid == mute {
			found = true
			if !e.NotAnswering || e.Attachable || !strings.Contains(e.Reason, "not answering") {
				t.Errorf("ps --json: mute process %+v", e)
			}
		}
	}
	if !found {
		t.Errorf("ps --json does not list the mute pid %d", mute)
	}
}
