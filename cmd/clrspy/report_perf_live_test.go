package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clrspy/clrspy/internal/workload"
	"github.com/clrspy/clrspy/report"
)

// pageFlames reads the flame graph views of a report page.
func pageFlames(t *testing.T, path string) []*report.Flame {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)<script id="clrspy-data" type="application/json">(.*?)</script>`).FindSubmatch(b)
	if m == nil {
		t.Fatal("no page data in the report")
	}
	var d struct {
		CPU   *report.Flame   `json:"cpu"`
		Views []*report.Flame `json:"views"`
	}
	if err := json.Unmarshal(m[1], &d); err != nil {
		t.Fatal(err)
	}
	if d.CPU == nil {
		t.Fatal("the report has no flame graph")
	}
	return append([]*report.Flame{d.CPU}, d.Views...)
}

// flameShare is the percentage of f's samples whose stack has a frame
// containing name.
func flameShare(f *report.Flame, name string) (float64, int64) {
	parent := make([]int32, len(f.NodeDepth))
	var path []int32
	for i, d := range f.NodeDepth {
		path = path[:d]
		parent[i] = -1
		if d > 0 {
			parent[i] = path[d-1]
		}
		path = append(path, int32(i))
	}
	var hit, total int64
	for s, n := range f.StackNode {
		total += f.StackCount[s]
		for k := n; k >= 0; k = parent[k] {
			if strings.Contains(f.Frames[f.NodeFrame[k]], name) {
				hit += f.StackCount[s]
				break
			}
		}
	}
	if total == 0 {
		return 0, 0
	}
	return 100 * float64(hit) / float64(total), total
}

// foldedFileShare is the percentage of a folded file's samples whose stack
// has a frame containing name.
func foldedFileShare(t *testing.T, path, name string) (float64, int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var hit, total int64
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		l := sc.Text()
		i := strings.LastIndexByte(l, ' ')
		if i < 0 {
			continue
		}
		n, err := strconv.ParseInt(l[i+1:], 10, 64)
		if err != nil {
			continue
		}
		total += n
		if strings.Contains(l[:i], name) {
			hit += n
		}
	}
	if total == 0 {
		return 0, 0
	}
	return 100 * float64(hit) / float64(total), total
}

// sessions counts the connections to the diagnostics socket of .NET
// process pid: one per open EventPipe session (the socket is the runtime's
// listening one; accepted connections are its other unix sockets, which
// cannot be told apart from /proc alone, so this counts the clients'
// side: clrspy processes with a socket connected to the runtime's path).
func sessions(pid int) int {
	b, err := os.ReadFile("/proc/net/unix")
	if err != nil {
		return 0
	}
	name := "dotnet-diagnostic-" + strconv.Itoa(pid) + "-"
	n := 0
	for _, l := range strings.Split(string(b), "\n") {
		// Connected client ends show no path; the runtime's accepted
		// ends show the socket's path with state 03 (connected).
		f := strings.Fields(l)
		if len(f) >= 8 && strings.Contains(f[7], name) && f[5] == "03" {
			n++
		}
	}
	return n
}

// perfFDs reports whether process pid holds perf_event file descriptors:
// a clrspy command has opened its sampler (after its EventPipe session).
func perfFDs(pid int) bool {
	ents, _ := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
	for _, e := range ents {
		if l, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/fd/" + e.Name()); err == nil && strings.Contains(l, "perf_event") {
			return true
		}
	}
	return false
}

// TestReportCPUPanelPerf: `clrspy report --pid` on the lock-heavy
// contention workload (four threads, one Monitor, the holder computing in
// SpinHold for 20 ms while the others wait) and `clrspy profile --sampler
// perf` on the same run, at the same time. The report's flame graph panel
// is the perf sampler's: titled "CPU", its only view, SpinHold's share of
// its samples within 5 points of the profile's. A third command on the
// same run, `clrspy report --sampler eventpipe`, shows what the page used
// to call CPU: the runtime's samples, now titled "wall clock, managed
// threads", where SpinHold is a small share (the waiting threads are
// sampled as much as the running one). The workload's own measure (CPU in
// SpinHold over the process's CPU time) is logged beside them: the perf
// samplers do not see the runtime's start before the session resumed it,
// nor does the workload's run window include it, so the same-run profile
// is the reference. Both commands sample at 499 Hz: about 4 s of CPU give
// 2,000 samples each, a counting error of about 1 point.
func TestReportCPUPanelPerf(t *testing.T) {
	bin := e2eBinary(t)
	p := workload.Start(t, nil, "contention", "threads=4", "iterations=60", "holdMs=20", "spin=1", "wait=1")
	pid := strconv.Itoa(p.Pid)
	dir := t.TempDir()
	page, folded, wallPage := filepath.Join(dir, "page.html"), filepath.Join(dir, "cpu.folded"), filepath.Join(dir, "wall.html")
	var repErr, profErr, wallErr bytes.Buffer
	rep := exec.Command(bin, "report", "--pid", pid, "--sampler", "perf", "--hz", "499", "-o", page)
	rep.Stderr = &repErr
	prof := exec.Command(bin, "profile", "--pid", pid, "--sampler", "perf", "--hz", "499", "--format", "folded", "-o", folded)
	prof.Stderr = &profErr
	wallRep := exec.Command(bin, "report", "--pid", pid, "--sampler", "eventpipe", "-o", wallPage)
	wallRep.Stderr = &wallErr
	for _, c := range []*exec.Cmd{rep, prof, wallRep} {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	}
	deadline := time.Now().Add(30 * time.Second)
	for !(perfFDs(rep.Process.Pid) && perfFDs(prof.Process.Pid) && sessions(p.Pid) >= 3) {
		if time.Now().After(deadline) {
			t.Fatalf("the samplers did not start within 30 s\nreport: %s\nprofile: %s\nwall: %s", repErr.String(), profErr.String(), wallErr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	p.Release()
	res, err := p.Wait(60 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*exec.Cmd{rep, prof, wallRep} {
		done := make(chan error, 1)
		go func() { done <- c.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("%v: %v\nreport: %s\nprofile: %s\nwall: %s", c.Args, err, repErr.String(), profErr.String(), wallErr.String())
			}
		case <-time.After(60 * time.Second):
			t.Fatalf("%v did not end after the target exited", c.Args)
		}
	}
	flames := pageFlames(t, page)
	got, n := flameShare(flames[0], "SpinHold")
	want, nw := foldedFileShare(t, folded, "SpinHold")
	own := 100 * res.Float("holdCpuMs") / res.Float("processCpuMs")
	t.Logf("report's %q view: SpinHold %.1f %% of %d samples; clrspy profile --sampler perf: %.1f %% of %d; workload: %.1f %% of its process CPU time (%.1f %% of the run's)",
		flames[0].Label, got, n, want, nw, own, 100*res.Float("holdCpuMs")/res.Float("runCpuMs"))
	if flames[0].Label != report.LabelCPU {
		t.Errorf("the panel's first view is %q, want %q", flames[0].Label, report.LabelCPU)
	}
	if n < 500 || nw < 500 {
		t.Fatalf("%d and %d samples: too few to compare shares", n, nw)
	}
	if math.Abs(got-want) > 5 {
		t.Errorf("SpinHold: %.1f %% of the report's CPU samples, %.1f %% of the profile's (more than 5 points apart)", got, want)
	}
	if len(flames) != 1 {
		t.Errorf("%d views, want the CPU view alone (the runtime's sampler is off when perf samples)", len(flames))
	}
	wf := pageFlames(t, wallPage)
	if wf[0].Label != report.LabelWall {
		t.Fatalf("--sampler eventpipe: the panel is %q, want %q", wf[0].Label, report.LabelWall)
	}
	wall, nWall := flameShare(wf[0], "SpinHold")
	t.Logf("--sampler eventpipe, %q view: SpinHold %.1f %% of %d samples", wf[0].Label, wall, nWall)
	if nWall == 0 || wall > got/2 {
		t.Errorf("the wall-clock view gives SpinHold %.1f %% of %d samples: want under half the CPU view's %.1f %% (waiting threads count there)", wall, nWall, got)
	}
}
