package main

import (
	"math"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/clrspy/clrspy/internal/workload"
)

// TestMemoryLiveTop: clrspy top in tmux on the nativeleak workload
// leaking 4 MiB a second in a cgroup limited to 400 MiB. The memory line
// (read every 2 s) names the native heap as the part that grows, at the
// workload's rate (4.19 MB/s, from 10 % under to 30 % over: a slope over
// a few 2 s readings, the sessions' own buffers on top), and gives the cgroup's
// limit as the cgroup's file says it, and the headroom as the limit less
// the usage it shows (to the line's rounding) and the cgroup's usage file
// read beside the screen (within 21 MB, 5 % of the limit: five seconds of
// leak between a reading and the file's).
func TestMemoryLiveTop(t *testing.T) {
	dir, _, limitFile, usageFile := makeMemoryCgroup(t, 400*mib)
	sh := exec.Command("/bin/sh", "-c", `echo $$ > "$0/cgroup.procs" && exec "$@"`, dir, workload.Exe(t), "nativeleak", "managedMB=8", "rateKBps=4096", "seconds=40")
	p := workload.StartCmd(t, sh, nil)
	awaitLine(t, p, "leaking", 1)
	tm := startTop(t, 160, 48, "top", "--pid", strconv.Itoa(p.Pid))
	growRe := regexp.MustCompile(`other [0-9.]+ [kMG]?B  native heap grows ([0-9.]+) MB/s  cgroup ([0-9.]+) MB of ([0-9.]+) MB \([0-9]+ %\), headroom ([0-9.]+) MB`)
	var m []string
	seen := ""
	tm.waitScreen("the memory line with the native heap growing and the cgroup's headroom", func(s string) bool {
		if m = growRe.FindStringSubmatch(s); m == nil {
			return false
		}
		if m[0] != seen {
			seen = m[0]
			t.Logf("memory line: %s", seen)
		}
		// A few readings in: the slope settles past its first two. The
		// sessions' event buffers (malloc'd) only add to the leak: +0.5
		// MB/s measured by hand.
		rate, _ := strconv.ParseFloat(m[1], 64)
		return rate >= 0.9*4.194 && rate <= 1.3*4.194
	})
	usageFileNow := float64(readUintFile(t, filepath.Join(dir, usageFile))) / 1e6
	limit := float64(readUintFile(t, filepath.Join(dir, limitFile))) / 1e6
	f := func(i int) float64 { v, _ := strconv.ParseFloat(m[i], 64); return v }
	rate, usage, shownLimit, headroom := f(1), f(2), f(3), f(4)
	t.Logf("top: native heap grows %.1f MB/s; cgroup %.1f of %.1f MB, headroom %.1f MB; the cgroup's files: usage %.1f MB, limit %.1f MB", rate, usage, shownLimit, headroom, usageFileNow, limit)
	if math.Abs(shownLimit-limit) > 0.05 {
		t.Errorf("limit %.1f MB on the screen, %.1f MB in the cgroup's file", shownLimit, limit)
	}
	if math.Abs(headroom-(shownLimit-usage)) > 0.15 {
		t.Errorf("headroom %.1f MB, the limit less the usage shown %.1f MB", headroom, shownLimit-usage)
	}
	if math.Abs(headroom-(limit-usageFileNow)) > 21 {
		t.Errorf("headroom %.1f MB, the cgroup's files say %.1f MB", headroom, limit-usageFileNow)
	}
	tm.keys("q")
	if rc, errs := tm.exit(); rc != 0 {
		t.Errorf("clrspy top exited %d: %s", rc, errs)
	}
}
