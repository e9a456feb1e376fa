package serve

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/clrspy/clrspy/internal/fleet"
	"github.com/clrspy/clrspy/perf"
)

// TestOffCPUProfile: /debug/pprof/profile?off_cpu=1 is a wall-clock
// profile (sample types cpu and off_cpu, label state) of the offcpu
// workload. Its pipe reader (blocked all the time, woken every 150 ms)
// holds the profile's 2 s of off_cpu time (the block in progress when
// its events were opened counted from then), within 1.6–2.2 s for the
// session's start and stop on a loaded machine, under libc's read.
// Bad off_cpu values are refused in one line.
func TestOffCPUProfile(t *testing.T) {
	dir := t.TempDir()
	path, name := alias(t, dir)
	d, _ := run(t, Config{Config: fleet.Config{Names: []string{name}}})
	h, err := d.Handler(HandlerOptions{HeapEvery: -1, ProfileEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	p := startAs(t, path, nil, "offcpu", "seconds=30", "warmupMs=0")
	pid := strconv.Itoa(p.Pid)
	if acc, err := perf.Check(p.Pid, perf.Options{OffCPU: true}); err != nil || !acc.OffCPU {
		t.Fatalf("this test needs off-CPU sampling (root): %v %s", err, acc.OffCPUNote)
	}
	waitFor(t, 20*time.Second, "session open", func() bool { ti, _ := info(d, pid); return ti.State == "running" })
	for url, code := range map[string]int{
		"/debug/pprof/profile?pid=" + pid + "&seconds=1&off_cpu=abc":                 400,
		"/debug/pprof/profile?pid=" + pid + "&seconds=1&off_cpu=1&sampler=eventpipe": 400,
		"/debug/pprof/contention?pid=" + pid + "&seconds=1&off_cpu=1":                400,
	} {
		if rec := get(t, h, url); rec.Code != code || strings.Count(strings.TrimSpace(rec.Body.String()), "\n") > 0 {
			t.Errorf("%s: %d %q, want %d in one line", url, rec.Code, rec.Body.String(), code)
		}
	}
	rec := get(t, h, "/debug/pprof/profile?pid="+pid+"&seconds=2&off_cpu=1")
	if rec.Code != 200 {
		t.Fatalf("off-CPU profile: %d %s", rec.Code, rec.Body)
	}
	pp, err := profile.Parse(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	if len(pp.SampleType) != 4 || pp.SampleType[1].Type != "cpu" || pp.SampleType[2].Type != "off_cpu" {
		t.Fatalf("sample types %v", pp.SampleType)
	}
	var pipe, underRead int64
	for _, s := range pp.Sample {
		if len(s.Label["thread"]) != 1 || !strings.HasPrefix(s.Label["thread"][0], "offcpu-pipe ") || s.Label["state"][0] != "off_cpu" {
			continue
		}
		pipe += s.Value[2]
		for _, l := range s.Location {
			if l.Line[0].Function.Name == "read" {
				underRead += s.Value[2]
				break
			}
		}
	}
	t.Logf("pipe reader: %.3f s off the CPU, %.3f s under read; comments %q", float64(pipe)/1e9, float64(underRead)/1e9, pp.Comments)
	if pipe < 1.6e9 || pipe > 2.2e9 {
		t.Errorf("pipe reader: %.3f s off the CPU in a 2 s profile, want 1.6–2.2 s", float64(pipe)/1e9)
	}
	if underRead < pipe*9/10 {
		t.Errorf("pipe reader: %.3f of %.3f s off the CPU under read", float64(underRead)/1e9, float64(pipe)/1e9)
	}
}
