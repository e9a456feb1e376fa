package perf

import (
	"bytes"
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/clrspy/clrspy/report"
	"github.com/clrspy/clrspy/stacks"
)

// offThreadResult is one thread of the offcpu workload mode.
type offThreadResult struct {
	Tid       uint64  `json:"tid"`
	WallMs    float64 `json:"wallMs"`
	CPUMs     float64 `json:"cpuMs"`
	OffMs     float64 `json:"offMs"`
	BlockedMs float64 `json:"blockedMs"`
	Calls     int     `json:"calls"`
}

const windowFrame = "Workload.OffCpuThreads.Window("

// TestOffCPUTime profiles the offcpu workload (a thread alternating 50 ms
// of CPU with 150 ms of Thread.Sleep, one blocked reading a pipe written
// every 150 ms, one in Task.Wait on a 150 ms Task.Delay, 3 s each) with
// off-CPU time, and checks per thread:
//
//   - the off-CPU time under the measured window (OffCpuThreads.Window)
//     is within 5 % of the workload's own wall minus thread CPU time
//     there. Both count the same thing (off the CPU, blocked or waiting
//     for a CPU) between the same instants; what separates them is a
//     switch-out's timestamp against the workload's clock reads (µs).
//     A loaded machine only adds runnable time, to both sides;
//   - that time is mostly under the blocking frame (Thread.Sleep, libc's
//     read over the kernel's pipe read, Task.Wait): at least 80 % of the
//     time the workload measured inside the blocking calls. Waiting for a
//     CPU after the wake-up is in the same blocked interval;
//   - the sleep thread's time off the CPU outside Thread.Sleep (while it
//     spins, preempted by the load) is labelled off_cpu=runnable (the
//     switch-out's PERF_RECORD_SWITCH said "preempted"), within 5 % and
//     20 ms of the workload's offMs - blockedMs.
//
// and that pprof has the sample types cpu and off_cpu and the state label.
func TestOffCPUTime(t *testing.T) {
	prof, res, s := profileWorkload(t, nil, ProfileOptions{Options: Options{Hz: 99, OffCPU: true}}, "offcpu", "seconds=3")
	if !prof.OffCPU {
		t.Fatalf("no off-CPU profile: notes %q", prof.Notes)
	}
	t.Logf("%d switch-outs read, stats %+v", s.Stats().Switches, s.Stats())
	blocking := map[string]*regexp.Regexp{
		"sleep": regexp.MustCompile(`(^|;)System\.Threading\.Thread\.Sleep\(`),
		// libc's read, then the kernel's pipe read (anon_pipe_read
		// since Linux 6.16).
		"pipe": regexp.MustCompile(`(^|;)read;([^;]*;)*(anon_)?pipe_read(;|$)`),
		"wait": regexp.MustCompile(`(^|;)System\.Threading\.Tasks\.Task\.(Wait|InternalWait)`),
	}
	for _, name := range []string{"sleep", "pipe", "wait"} {
		var r offThreadResult
		if err := res.Get(name, &r); err != nil || r.Tid == 0 {
			t.Fatalf("work.%s: %+v %v", name, r, err)
		}
		var window, block, all, runnable float64
		var example string
		for i := range prof.Samples {
			sm := &prof.Samples[i]
			if !sm.OffCPU || prof.Threads[sm.Thread].ID != r.Tid {
				continue
			}
			ms := float64(sm.Nanos) / 1e6
			all += ms
			st := prof.Folded(sm, ";")
			if !strings.Contains(st, windowFrame) {
				continue
			}
			window += ms
			for _, l := range sm.Labels {
				if l.Key == "off_cpu" && l.Str == "runnable" {
					runnable += ms
				}
			}
			if blocking[name].MatchString(st) {
				block += ms
			}
			if example == "" && blocking[name].MatchString(st) {
				example = st
			}
		}
		t.Logf("%s (tid %d): off-CPU %.1f ms under Window (%.1f in all), %.1f under the blocking frame, %.1f runnable; workload: wall %.1f - CPU %.1f = %.1f ms off, %.1f ms in %d blocking calls; e.g. %s",
			name, r.Tid, window, all, block, runnable, r.WallMs, r.CPUMs, r.OffMs, r.BlockedMs, r.Calls, example)
		if math.Abs(window-r.OffMs) > 0.05*r.OffMs {
			t.Errorf("%s: %.1f ms off the CPU under Window, the workload measured %.1f ms (more than 5 %% apart)", name, window, r.OffMs)
		}
		if want := r.OffMs - r.BlockedMs; name == "sleep" && math.Abs(runnable-want) > 0.05*want+20 {
			t.Errorf("sleep: %.1f ms off the CPU labelled runnable, the workload was off the CPU %.1f ms outside Thread.Sleep (spinning: preempted)", runnable, want)
		}
		if block < 0.8*r.BlockedMs {
			t.Errorf("%s: %.1f ms off the CPU under the blocking frame %v, the workload spent %.1f ms in the blocking calls", name, block, blocking[name], r.BlockedMs)
		}
	}
	var buf bytes.Buffer
	if err := report.WritePprof(&buf, prof); err != nil {
		t.Fatal(err)
	}
	pp, err := profile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, st := range pp.SampleType {
		types = append(types, st.Type+"/"+st.Unit)
	}
	if strings.Join(types, ",") != "samples/count,cpu/nanoseconds,off_cpu/nanoseconds,wall/nanoseconds" {
		t.Errorf("pprof sample types %v", types)
	}
	states := map[string]int64{}
	for _, sm := range pp.Sample {
		if len(sm.Label["state"]) == 1 {
			states[sm.Label["state"][0]] += sm.Value[2]
			if sm.Label["state"][0] == "on_cpu" && sm.Value[2] != 0 || sm.Label["state"][0] == "off_cpu" && sm.Value[1] != 0 {
				t.Errorf("pprof sample %v has time in the other state's value", sm.Value)
			}
		}
	}
	if states["off_cpu"] <= 0 {
		t.Errorf("pprof: no off_cpu time under state=off_cpu (%v)", states)
	}
}

// TestOffCPULean profiles pingpong (two threads handing a token back and
// forth through AutoResetEvents, thousands of times a second, each
// blocking again and again at the same two places: WaitOne, and Set when
// the other holds the event's lock) with off-CPU time and checks that
// most switch-outs were read without callchains (the lean events, the
// walk from the cache), and that of each thread's blocked time (off the
// CPU, not runnable) at least 95 % is under those two blocking frames.
func TestOffCPULean(t *testing.T) {
	prof, res, s := profileWorkload(t, nil, ProfileOptions{Options: Options{Hz: 99, OffCPU: true}}, "pingpong", "seconds=2", "spin=100000")
	st := s.Stats()
	t.Logf("stats %+v, %.0f handoffs/s", st, res.Float("handoffsPerSecond"))
	if st.Switches < 2000 || st.Lean < st.Switches*9/10 {
		t.Errorf("%d of %d switch-outs read without callchains, want at least 90 %% of at least 2,000", st.Lean, st.Switches)
	}
	var tids []uint64
	if err := res.Get("tids", &tids); err != nil || len(tids) != 2 {
		t.Fatalf("tids %v: %v", tids, err)
	}
	block := regexp.MustCompile(`(^|;)System\.Threading\.(WaitHandle\.WaitOne|EventWaitHandle\.Set\(\))`)
	for _, tid := range tids {
		var all, under float64
		var other string
		for i := range prof.Samples {
			sm := &prof.Samples[i]
			if !sm.OffCPU || prof.Threads[sm.Thread].ID != tid || slices.Contains(sm.Labels, stacks.Label{Key: "off_cpu", Str: "runnable"}) {
				continue
			}
			ms := float64(sm.Nanos) / 1e6
			all += ms
			if st := prof.Folded(sm, ";"); block.MatchString(st) {
				under += ms
			} else if other == "" {
				other = st
			}
		}
		t.Logf("thread %d: %.1f ms blocked, %.1f under WaitOne or Set; not: e.g. %s", tid, all, under, other)
		if all < 100 || under < 0.95*all {
			t.Errorf("thread %d: %.1f of %.1f ms blocked under WaitOne or Set, want at least 95 %%", tid, under, all)
		}
	}
}
