package metrics

import (
	"fmt"
	"slices"
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
		st, err := source.Open(source.Spec{File: tracetest.Path(t, name)})
		if err != nil {
			t.Fatal(err)
		}
		a := triage.New(st.Header(), triage.Options{Target: "--pid 1", NoProfile: true})
		if _, err := st.Run(a); err != nil {
			t.Fatal(err)
		}
		st.Close()
		ff := a.Facts()
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
