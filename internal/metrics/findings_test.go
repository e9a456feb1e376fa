package metrics

import (
	"fmt"
	"slices"
	"strings"

	"github.com/clrspy/clrspy/analysis"
	"testing"

	"github.com/clrspy/clrspy/internal/monitor"
	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/source"
	"github.com/clrspy/clrspy/triage"
)

// TestFindingsAsTriageJudges: clrspy_findings judges a monitor's model
// (monitor.TriageFacts) as `clrspy triage FILE` judges the same stream
// (triage's Analyzer): the same rule ids at the same severities for each
// fixture (gc-wks: GC pauses 21.7 % critical; its heap growth, 15 MB
// after the warm-up, below the leak guard: memory info, not the critical
// leak suspect a first-to-last trend made of it; contention: 518 ms of
// waits over 5 threads, 24.3 %: warning).
func TestFindingsAsTriageJudges(t *testing.T) {
	for _, name := range []string{"gc-wks.nettrace", "contention.nettrace"} {
		tg := fixtureTarget(t, name, "1", "P")
		ff := triageOf(t, name).Facts()
		file := judgedRules(triage.Findings(ff))
		// Live, the thread count is /proc's (metrics.Target.Threads); a
		// file has none: the threads its events came from stand for it.
		lf := monitor.TriageFacts(tg.Snapshot, monitor.TriageEnv{Target: "--pid 1", Threads: ff.Locks.Threads, CPUDemandPct: -1})
		live := judgedRules(triage.Findings(lf))
		if !slices.Equal(live, file) {
			t.Errorf("%s: clrspy_findings judged %v, clrspy triage %v", name, live, file)
		}
		want := map[string][]string{"gc-wks.nettrace": {"gc.pause_pct critical", "locks info", "memory info"},
			"contention.nettrace": {"gc info", "locks.wait_pct warning"}}[name]
		if !slices.Equal(live, want) {
			t.Errorf("%s: judged %v, want %v", name, live, want)
		}
	}
}

func judgedRules(fs []triage.Finding) []string {
	var out []string
	for _, f := range fs {
		r := f.Rule
		if r == "" {
			r = string(f.Area)
		}
		out = append(out, fmt.Sprintf("%s %s", r, f.Severity))
	}
	slices.Sort(out)
	return out
}

// TestFindingsCPUDemand: clrspy_findings judges the process's CPU demand
// (Target.CPUDemandPct, /proc's schedstat over the memory readings' span)
// as `clrspy triage` judges its window's (Analyzer.SetCPU, the same
// readings): on 2 cores, 90 % is critical, 50 % a warning (thresholds
// 75 and 40 % of cores), 10 % info; unknown (no cores) no demand rule.
func TestFindingsCPUDemand(t *testing.T) {
	for _, tc := range []struct {
		cores  int
		demand float64
		want   string
	}{{2, 90, "cpu.demand_pct critical"}, {2, 50, "cpu.demand_pct warning"}, {2, 10, "cpu info"}, {0, 90, ""}} {
		tg := fixtureTarget(t, "contention.nettrace", "1", "P")
		tg.Cores, tg.CPUDemandPct = tc.cores, tc.demand
		a := triageOf(t, "contention.nettrace")
		if tc.cores > 0 {
			a.SetCPU(tc.cores, tc.demand)
		}
		file := cpuRules(triage.Findings(a.Facts()))
		// clrspy_findings' own counts, as exported.
		rec := &recordSink{}
		walkFindings(&tg, tg.Snapshot, func(v ...string) []string { return v }, rec)
		var live []string
		for _, r := range rec.rows {
			if r.fam == famFindings && r.labels[0] == "cpu" && r.v > 0 {
				live = append(live, fmt.Sprintf("%s %v", r.labels[1], r.v))
			}
		}
		fs := triage.Findings(monitor.TriageFacts(tg.Snapshot, monitor.TriageEnv{Target: "--pid 1", Cores: tc.cores, CPUDemandPct: cmpDemand(tc.cores, tc.demand)}))
		got := cpuRules(fs)
		if got != file || got != tc.want {
			t.Errorf("%d cores, %.0f %%: clrspy_findings judged %q, clrspy triage %q, want %q", tc.cores, tc.demand, got, file, tc.want)
		}
		wantLive := []string(nil)
		if tc.want != "" {
			wantLive = []string{strings.Fields(tc.want)[1] + " 1"}
		}
		if !slices.Equal(live, wantLive) {
			t.Errorf("%d cores, %.0f %%: clrspy_findings exported cpu %v, want %v", tc.cores, tc.demand, live, wantLive)
		}
	}
}

func cmpDemand(cores int, d float64) float64 {
	if cores == 0 {
		return -1
	}
	return d
}

// cpuRules is the CPU area's judged rule ("" none).
func cpuRules(fs []triage.Finding) string {
	for _, r := range judgedRules(fs) {
		if strings.HasPrefix(r, "cpu") {
			return r
		}
	}
	return ""
}

// recordSink keeps what a walk exports.
type recordSink struct {
	rows []struct {
		fam    *Family
		v      float64
		labels []string
	}
}

func (r *recordSink) value(f *Family, v float64, lv []string) {
	r.rows = append(r.rows, struct {
		fam    *Family
		v      float64
		labels []string
	}{f, v, lv})
}

func (r *recordSink) hist(*Family, analysis.Histogram, *Native, []string) {}

// triageOf is `clrspy triage FILE`'s analyzer run over the fixture name.
func triageOf(t *testing.T, name string) *triage.Analyzer {
	t.Helper()
	st, err := source.Open(source.Spec{File: tracetest.Path(t, name)})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	a := triage.New(st.Header(), triage.Options{Target: "--pid 1", NoProfile: true})
	if _, err := st.Run(a); err != nil {
		t.Fatal(err)
	}
	return a
}
