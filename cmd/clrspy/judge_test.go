package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clrspy/clrspy/internal/monitor"
	"github.com/clrspy/clrspy/internal/tui"
	"github.com/clrspy/clrspy/source"
	"github.com/clrspy/clrspy/triage"
)

// TestOneJudgementEverySurface: one fixture trace through every surface
// that judges a process: `clrspy triage --json` (serve's /triage runs the
// same window job, capture.NewTriage), the report page's findings, and the
// live monitor that feeds serve's clrspy_findings (monitor.TriageFacts,
// triage.FactsFrom over a monitor's snapshot with serve's options, fed
// the fixture's events) give the
// same findings (area, severity, title), in the same order; top's banner
// (tui.Screen.Findings) holds those above info. The heap
// snapshot's own GC (heap-graph) is out of the application's induced GCs
// on every surface: the monitor's triage.GCTally keeps gcpause's HeapDump
// mark (Snapshot.Tally); before, the live path said "1 induced GCs:
// something calls GC.Collect". Before one judgement, the live path also
// took the lock share over a thread count guessed from the pool's
// counter (composite: locks critical 33% against triage's calm 3.0%) and
// had no thread-pool, exception or top-method finding from the analyses.
func TestOneJudgementEverySurface(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		trace string
		want  string
	}{
		{"../../testdata/traces/composite.nettrace", "gc critical 15 blocking gen2 GCs (382/min)"},
		{gunzipTrace(t, "exceptions.nettrace.gz", dir, 0), "exceptions warning 379 exceptions/s (160 thrown); top: System.InvalidOperationException"},
		{gunzipTrace(t, "heap-graph.nettrace.gz", dir, 0), "gc info GC calm: 1 GC, 0.0% paused (the runtime's count), longest stop 1 ms (suspension to restart); GC 1 is the heap snapshot's own (1.3 ms), not counted"},
		{gunzipTrace(t, "threadpool.nettrace.gz", dir, 0), "threadpool info thread pool calm: queue ≤ 1, 13 threads"},
		{gunzipTrace(t, "requests.nettrace.gz", dir, 0), "gc warning GC pauses hit 4.9% of requests (20 of 406; 4.3% of request time, 110 ms); most on GET /call/{n}: 10 of 102, p99 485.6 ms hit against 14.6 ms not hit"},
		{"../../testdata/traces/cpu.nettrace", "cpu info CPU: no usage figure in this stream; top method Workload.Cpu.HotA 63%"},
		{"../../testdata/traces/gc-induced.nettrace", "gc critical 9 induced GCs (1241/min): something calls GC.Collect"},
		{"../../testdata/traces/contention.nettrace", "locks warning threads wait on locks 24% of their time (17 waits, 518 ms); top: lock 0x7fad10004ac0"},
	} {
		name := filepath.Base(tc.trace)
		stdout, stderr, err := runCaptured(t, "triage", "--json", tc.trace)
		if err != nil {
			t.Fatalf("triage %s: %v\n%s", name, err, stderr)
		}
		var doc struct {
			Findings []triage.Finding `json:"findings"`
		}
		if err := json.Unmarshal(stdout, &doc); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, name+".html")
		if _, stderr, err := runCaptured(t, "report", "-o", out, tc.trace); err != nil {
			t.Fatalf("report %s: %v\n%s", name, err, stderr)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		m := pageDataRE.FindSubmatch(b)
		if m == nil {
			t.Fatalf("%s: no page data", out)
		}
		var page struct {
			Findings []triage.Finding `json:"findings"`
		}
		if err := json.Unmarshal(m[1], &page); err != nil {
			t.Fatal(err)
		}
		// The live path: a monitor fed the fixture's events, judged by
		// the gauge's facts. With serve's options (internal/serve's
		// target) and with top's CPU window as well.
		var topScreen *tui.Screen
		liveFindings := func(o monitor.Options) []triage.Finding {
			st, err := source.Open(source.Spec{File: tc.trace})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			mon := monitor.New(st.Header(), o)
			if _, err := st.Run(mon); err != nil {
				t.Fatal(err)
			}
			snap := mon.Snapshot()
			if o.CPU {
				// top's banner: the same snapshot in top's model.
				m := tui.New(tui.Options{})
				m.Update(snap)
				topScreen = m.Screen()
			}
			return triage.Findings(monitor.TriageFacts(snap, monitor.TriageEnv{Target: tc.trace, Threads: -1, CPUDemandPct: -1}))
		}
		serveOpts := monitor.Options{Locks: true, Exceptions: true, ThreadPool: true, Requests: true}
		live := liveFindings(serveOpts)
		serveOpts.CPU, serveOpts.CPUWindow = true, 300*time.Second
		liveCPU := liveFindings(serveOpts)
		line := func(fs []triage.Finding) []string {
			var s []string
			for _, f := range fs {
				s = append(s, fmt.Sprintf("%s %s %s", f.Area, f.Severity, f.Title))
			}
			return s
		}
		tri, rep, mn := line(doc.Findings), line(page.Findings), line(liveCPU)
		// top's banner holds triage's findings above info, in its order.
		var above []string
		for _, f := range doc.Findings {
			if f.Severity > triage.Info {
				above = append(above, fmt.Sprintf("%s %s %s", f.Area, f.Severity, f.Title))
			}
		}
		if !slices.Contains(tri, tc.want) {
			t.Errorf("%s: triage's findings %q, want %q among them", name, tri, tc.want)
		}
		// The one fact serve's monitor lacks: the CPU samples (serve
		// asks for no sample profiler, its monitor keeps no CPU window),
		// so a trace's top method names no CPU finding there; every other
		// finding is triage's.
		var noCPU []string
		for _, f := range doc.Findings {
			if f.Area != triage.AreaCPU || !strings.Contains(f.Title, "top method") {
				noCPU = append(noCPU, fmt.Sprintf("%s %s %s", f.Area, f.Severity, f.Title))
			}
		}
		for _, s := range []struct {
			what      string
			want, got []string
		}{{"the report's", tri, rep}, {"the live monitor's (top's CPU window)", tri, mn}, {"serve's monitor's (no CPU samples)", noCPU, line(live)}, {"top's banner", above, line(topScreen.Findings)}} {
			if !slices.Equal(s.want, s.got) {
				t.Errorf("%s: triage's findings\n  %s\n%s\n  %s", name, strings.Join(s.want, "\n  "), s.what, strings.Join(s.got, "\n  "))
			}
		}
	}
}
