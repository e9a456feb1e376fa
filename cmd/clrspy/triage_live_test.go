package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/internal/workload"
	"github.com/clrspy/clrspy/perf"
	"github.com/clrspy/clrspy/triage"
)

// triageDoc is the part of `clrspy triage --json` the tests read.
type triageDoc struct {
	Complete bool             `json:"complete"`
	Calm     bool             `json:"calm"`
	Worst    triage.Severity  `json:"worst"`
	Findings []triage.Finding `json:"findings"`
	Facts    triage.Facts     `json:"facts"`
}

// TestTriageConfusion is the confusion matrix: seven workloads, each
// launched under `clrspy triage --json` for a few seconds, one after
// another. Each must get its own area as the most severe finding, at
// critical; the calm one nothing above info. The figures behind each
// finding are checked against what the workload measured itself.
//
// Under load (2 cores, load average near 20 when this was written) the
// workloads are built to be far past their thresholds on figures that
// load does not shrink: GC.Collect calls and lock waits are counted, not
// timed against the CPU; the storm throws ~100 times the critical rate
// on a free core; the starving pool queues hundreds of items; the leak
// keeps 8 MB a second (16 MB the guard, 120 MB/min critical); CPU is the
// threads' run-or-runnable time (demand), which a busy machine does not
// reduce. The durations (4–5 s) leave room for the launch and the JIT.
func TestTriageConfusion(t *testing.T) {
	cases := []struct {
		name  string
		want  triage.Area // "" for the calm one
		mode  []string
		check func(t *testing.T, d *triageDoc, w *workload.Result)
	}{
		{"gc-induced", triage.AreaGC, []string{"induced", "gen0=0", "gen1=0", "gen2=15", "sleepMs=200"}, func(t *testing.T, d *triageDoc, w *workload.Result) {
			// Launched: the session sees every GC; each GC.Collect(2) is
			// one induced blocking gen2 GC.
			if d.Facts.GC.Induced != w.Gen2 || d.Facts.GC.Gen2Blocking != w.Gen2 || w.Gen2 < 15 {
				t.Errorf("induced %d, gen2 blocking %d; the runtime counted %d gen2 GCs", d.Facts.GC.Induced, d.Facts.GC.Gen2Blocking, w.Gen2)
			}
		}},
		{"contention", triage.AreaLocks, []string{"contention", "threads=6", "iterations=30", "holdMs=20"}, func(t *testing.T, d *triageDoc, w *workload.Result) {
			var contended []int64
			if err := w.Get("contended", &contended); err != nil {
				t.Fatal(err)
			}
			var n int64
			for _, c := range contended {
				n += c
			}
			// Every contended Enter waits (the holder sleeps 20 ms, longer
			// than any spin), so at least the workload's count; more when a
			// woken waiter loses the lock to another thread and waits again
			// (barging, more frequent on a loaded machine: 149 for 145 in
			// one run) and for the runtime's own waits (the counters' poll).
			if c := d.Facts.Locks.Contentions; c < n || c > n+n/10+3 {
				t.Errorf("%d waits; the workload waited %d times", c, n)
			}
		}},
		{"cpu", triage.AreaCPU, []string{"cpu", "seconds=4", "threads=2"}, func(t *testing.T, d *triageDoc, w *workload.Result) {
			if d.Facts.CPU.Source != "schedstat" || d.Facts.CPU.Pct < 75 {
				t.Errorf("cpu %+v: two spinning threads on 2 cores should ask for ≥ 75%%", d.Facts.CPU)
			}
		}},
		{"cpu-1-thread", triage.AreaCPU, []string{"cpu", "seconds=4", "threads=1"}, func(t *testing.T, d *triageDoc, w *workload.Result) {
			// One thread spinning: half of 2 cores, but the thread itself
			// saturated, named with its id.
			c := d.Facts.CPU
			var f *triage.Finding
			for i := range d.Findings {
				if d.Findings[i].Rule == "cpu.thread_pct" {
					f = &d.Findings[i]
				}
			}
			if c.BusiestThreadPct < 90 || c.BusiestThreadID == 0 || f == nil || f.Severity != triage.Critical ||
				!strings.HasPrefix(f.Title, fmt.Sprintf("one thread saturates a core: thread %d", c.BusiestThreadID)) {
				t.Errorf("cpu %+v, thread finding %+v", c, f)
			}
			// Named by default where perf_event is permitted (the kernel
			// decides for a process of this user; asked as triage asks):
			// HotA does three times HotB's work.
			if _, err := perf.Check(os.Getpid(), perf.Options{Hz: 99}); err == nil {
				if c.MethodsSource != "perf" || len(c.TopMethods) < 2 || c.TopMethods[0].Name != "Workload.Cpu.HotA" || c.TopMethods[1].Name != "Workload.Cpu.HotB" ||
					f == nil || !strings.Contains(f.Title, "; top: Workload.Cpu.HotA ") {
					t.Errorf("top methods %s %+v, finding %+v: want HotA then HotB from perf", c.MethodsSource, c.TopMethods, f)
				}
			} else if c.MethodsSource != "" {
				t.Errorf("perf not permitted (%v), yet methods from %q", err, c.MethodsSource)
			}
		}},
		{"churn", triage.AreaGC, []string{"churn", "seconds=4"}, func(t *testing.T, d *triageDoc, w *workload.Result) {
			// GC-heavy and launched: the old generations grow from nothing
			// at start-up, which is no leak.
			for _, f := range d.Findings {
				if f.Area == triage.AreaMemory && f.Severity != triage.Info {
					t.Errorf("churn: memory judged %s: %s (facts %+v)", f.Severity, f.Title, d.Facts.Memory)
				}
			}
		}},
		{"leak", triage.AreaMemory, []string{"leak", "seconds=5"}, func(t *testing.T, d *triageDoc, w *workload.Result) {
			// gen2+LOH grew by at most what the list kept (plus 8 MB of
			// the churn's survivors) and at least the 16 MB guard.
			m := d.Facts.Memory
			if g := m.LastOldMB - m.FirstOldMB; g < triage.MinOldGrowthMB || g > w.Float("leakedMB")+8 {
				t.Errorf("old generations grew %.1f MB; the workload kept %.1f MB", g, w.Float("leakedMB"))
			}
		}},
		{"storm", triage.AreaExceptions, []string{"storm", "seconds=5"}, func(t *testing.T, d *triageDoc, w *workload.Result) {
			// The counter's last interval may end before the last throws
			// (it publishes once a second): at least 60% of them, never
			// more than were thrown.
			thrown := w.Float("thrown")
			if c := d.Facts.Exceptions.Count; c < 0.6*thrown || c > thrown+5 {
				t.Errorf("%.0f exceptions counted; the workload threw %.0f", c, thrown)
			}
		}},
		{"flood", triage.AreaThreadPool, []string{"flood", "seconds=5"}, func(t *testing.T, d *triageDoc, w *workload.Result) {
			tp := d.Facts.ThreadPool
			if tp.QueueMax < 100 || float64(w.Int("queued")) < tp.QueueMax || tp.ThreadsMax > float64(w.Int("poolThreads"))+2 {
				t.Errorf("queue max %.0f, threads %.0f; the workload queued %d, the pool had %d threads", tp.QueueMax, tp.ThreadsMax, w.Int("queued"), w.Int("poolThreads"))
			}
		}},
		{"idle", "", []string{"idle", "seconds=4"}, nil},
	}
	var rows []matrixRow
	for _, c := range cases {
		d, w := runTriageLive(t, c.mode...)
		top := d.Findings[0]
		row := matrixRow{name: c.name, want: c.want, cells: map[triage.Area]triage.Severity{}, top: top}
		for _, f := range d.Findings {
			if s, ok := row.cells[f.Area]; !ok || f.Severity > s {
				row.cells[f.Area] = f.Severity
			}
		}
		rows = append(rows, row)
		switch {
		case c.want == "" && !(d.Calm && d.Worst == triage.Info):
			t.Errorf("%s: want nothing above info, got %s %s: %s", c.name, top.Severity, top.Area, top.Title)
		case c.name == "churn" && top.Area != c.want:
			// How much of the time a GC-heavy process is paused depends
			// on the machine: the GC first, at whatever severity.
			t.Errorf("%s: want %s first, got %s %s: %s", c.name, c.want, top.Severity, top.Area, top.Title)
		case c.name != "churn" && c.want != "" && (top.Area != c.want || top.Severity != triage.Critical):
			t.Errorf("%s: want critical %s first, got %s %s: %s", c.name, c.want, top.Severity, top.Area, top.Title)
		}
		if !d.Complete {
			t.Errorf("%s: report partial", c.name)
		}
		if c.check != nil {
			c.check(t, d, w)
		}
	}
	t.Log("\n" + matrix(rows))
}

type matrixRow struct {
	name  string
	want  triage.Area
	cells map[triage.Area]triage.Severity
	top   triage.Finding
}

// matrix prints the rows as a markdown table: the highest severity per
// area, the most severe finding marked with *.
func matrix(rows []matrixRow) string {
	var b strings.Builder
	b.WriteString("| workload | expected |")
	for _, a := range triage.Areas {
		fmt.Fprintf(&b, " %s |", a)
	}
	b.WriteString(" most severe finding |\n|---|---|")
	for range triage.Areas {
		b.WriteString("---|")
	}
	b.WriteString("---|\n")
	for _, r := range rows {
		want := string(r.want)
		if want == "" {
			want = "nothing above info"
		}
		fmt.Fprintf(&b, "| %s | %s |", r.name, want)
		for _, a := range triage.Areas {
			s, ok := r.cells[a]
			cell := "–"
			if ok {
				cell = s.String()
			}
			if a == r.top.Area && (r.top.Severity > triage.Info) {
				cell = "**" + cell + "**"
			}
			fmt.Fprintf(&b, " %s |", cell)
		}
		fmt.Fprintf(&b, " %s |\n", r.top.Title)
	}
	return b.String()
}

// runTriageLive launches a workload mode under `clrspy triage --json`.
func runTriageLive(t *testing.T, mode ...string) (*triageDoc, *workload.Result) {
	t.Helper()
	argv := workload.Argv(t, mode[0], mode[1:]...)
	out := filepath.Join(t.TempDir(), "triage.json")
	stdout, stderr, err := runCaptured(t, append([]string{"triage", "--json", "-o", out, "--"}, argv...)...)
	if err != nil {
		t.Fatalf("clrspy triage %s: %v\nstderr:\n%s", mode[0], err, tail(stderr))
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var d triageDoc
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Findings) == 0 {
		t.Fatalf("%s: no findings", mode[0])
	}
	w, err := workload.ParseResult(stdout)
	if err != nil {
		t.Fatalf("%v\nstderr:\n%s", err, tail(stderr))
	}
	return &d, w
}
