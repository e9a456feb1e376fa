package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/clrspy/clrspy/internal/workload"
	"github.com/clrspy/clrspy/triage"
)

// TestTriageFileText: `clrspy triage FILE` on the contention fixture
// (four threads, one Monitor, 518 ms of waits in 0.43 s): the findings
// come first, the lock one above info, with the file as the next
// command's target, and no line passes 100 columns.
func TestTriageFileText(t *testing.T) {
	f := "../../testdata/traces/contention.nettrace"
	out, err := runCLI(t, "triage", f)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if lines[0] != "1 finding(s) above info in "+f+" over 0.4 s" || !strings.HasPrefix(lines[2], "WARNING   locks       threads wait on locks 24% of their time (17 waits, 518 ms)") ||
		!strings.Contains(out, "next: clrspy locks "+f+"\n") {
		t.Errorf("output:\n%s", out)
	}
	for i, l := range lines {
		if n := utf8.RuneCountInString(l); n > 100 {
			t.Errorf("line %d has %d columns: %q", i+1, n, l)
		}
	}
	if _, err := runCLI(t, "triage", "--format", "pprof", f); err == nil || err.Error() != "--format pprof: triage writes text or json" {
		t.Errorf("--format pprof: %v", err)
	}
}

// TestTriageFileJSON: --json has the envelope, the findings most severe
// first (the induced fixture: 9 induced GCs, 4 of them blocking gen2) and
// the facts.
func TestTriageFileJSON(t *testing.T) {
	out, err := runCLI(t, "triage", "--json", "../../testdata/traces/gc-induced.nettrace")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var d struct {
		Source     string           `json:"source"`
		Complete   bool             `json:"complete"`
		Truncated  *bool            `json:"truncated"`
		EventsLost *uint64          `json:"events_lost"`
		Worst      string           `json:"worst"`
		Findings   []triage.Finding `json:"findings"`
		Facts      triage.Facts     `json:"facts"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	if !d.Complete || d.Truncated == nil || d.EventsLost == nil || d.Worst != "critical" || len(d.Findings) < 2 {
		t.Fatalf("document %+v", d)
	}
	f0, f1 := d.Findings[0], d.Findings[1]
	if f0.Area != triage.AreaGC || f0.Title != "9 induced GCs (1241/min): something calls GC.Collect" || f1.Title != "4 blocking gen2 GCs (552/min)" ||
		f0.Evidence["induced"] != 9.0 || d.Facts.GC.Gen2Blocking != 4 {
		t.Errorf("findings %+v %+v", f0, f1)
	}
}

// TestReportFindings: the HTML report's data carries the same findings,
// which the page shows above its panels.
func TestReportFindings(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.html")
	if msg, err := runCLI(t, "report", "-o", out, "../../testdata/traces/gc-induced.nettrace"); err != nil {
		t.Fatalf("%v\n%s", err, msg)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	_, data, _ := strings.Cut(html, `<script id="clrspy-data" type="application/json">`)
	data, _, _ = strings.Cut(data, "</script>")
	var page struct {
		Findings []triage.Finding `json:"findings"`
	}
	if err := json.Unmarshal([]byte(data), &page); err != nil {
		t.Fatal(err)
	}
	if len(page.Findings) == 0 || page.Findings[0].Title != "9 induced GCs (1241/min): something calls GC.Collect" ||
		strings.Index(html, `id="p-findings"`) > strings.Index(html, `id="summary"`) {
		t.Errorf("page findings %+v", page.Findings)
	}
}

// TestReportFindingsEqualTriage: the report page's findings are clrspy
// triage's: the same trace through `clrspy triage --json` and `clrspy
// report` gives the same findings (area, severity, title), in the same
// order. Before, the page's judgement lacked triage's thread-pool,
// exception and CPU facts: the exceptions fixture's storm (a warning in
// triage) and the CPU fixture's top method were not on the page.
func TestReportFindingsEqualTriage(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		trace string
		// want: a finding both must hold (area, severity, title).
		want string
		n    int
	}{
		{"../../testdata/traces/composite.nettrace", "gc critical 15 blocking gen2 GCs (382/min)", 8},
		{"../../testdata/traces/cpu.nettrace", "cpu info CPU: no usage figure in this stream; top method Workload.Cpu.HotA 63%", 3},
		{gunzipTrace(t, "exceptions.nettrace.gz", dir, 0), "exceptions warning 379 exceptions/s (160 thrown); top: System.InvalidOperationException", 3},
		{gunzipTrace(t, "threadpool.nettrace.gz", dir, 0), "threadpool info thread pool calm: queue ≤ 1, 13 threads", 5},
	} {
		stdout, stderr, err := runCaptured(t, "triage", "--json", tc.trace)
		if err != nil {
			t.Fatalf("triage %s: %v\n%s", tc.trace, err, stderr)
		}
		var doc struct {
			Findings []triage.Finding `json:"findings"`
		}
		if err := json.Unmarshal(stdout, &doc); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, filepath.Base(tc.trace)+".html")
		if _, stderr, err := runCaptured(t, "report", "-o", out, tc.trace); err != nil {
			t.Fatalf("report %s: %v\n%s", tc.trace, err, stderr)
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
		line := func(fs []triage.Finding) []string {
			var s []string
			for _, f := range fs {
				s = append(s, fmt.Sprintf("%s %s %s", f.Area, f.Severity, f.Title))
			}
			return s
		}
		tri, rep := line(doc.Findings), line(page.Findings)
		if !slices.Equal(tri, rep) {
			t.Errorf("%s: triage's findings\n  %s\nthe report's\n  %s", filepath.Base(tc.trace), strings.Join(tri, "\n  "), strings.Join(rep, "\n  "))
		}
		if len(tri) != tc.n || !slices.Contains(tri, tc.want) {
			t.Errorf("%s: triage's %d findings %q, want %d with %q", filepath.Base(tc.trace), len(tri), tri, tc.n, tc.want)
		}
	}
}

// TestReportFindingsEqualTriageLive: a launched program judged by `clrspy
// report -- COMMAND` and by `clrspy triage -- COMMAND` (two runs of the
// cpu workload: one thread spinning in HotA and HotB) gets the same
// findings, rule and severity, from the same facts: the report's session
// asks for the counters and reads /proc's demand as triage's does (before,
// the page had no CPU finding, nor any counter's). Both name the
// saturated thread's top method.
func TestReportFindingsEqualTriageLive(t *testing.T) {
	dir := t.TempDir()
	bin := e2eBinary(t)
	argv := workload.Argv(t, "cpu", "seconds=4")
	tj, page := filepath.Join(dir, "t.json"), filepath.Join(dir, "r.html")
	if out, err := exec.Command(bin, append([]string{"triage", "--json", "-o", tj, "--"}, argv...)...).CombinedOutput(); err != nil {
		t.Fatalf("triage: %v\n%s", err, out)
	}
	if out, err := exec.Command(bin, append([]string{"report", "-o", page, "--"}, argv...)...).CombinedOutput(); err != nil {
		t.Fatalf("report: %v\n%s", err, out)
	}
	var doc, pg struct {
		Findings []triage.Finding `json:"findings"`
	}
	b, err := os.ReadFile(tj)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	h, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	m := pageDataRE.FindSubmatch(h)
	if m == nil {
		t.Fatal("no page data")
	}
	if err := json.Unmarshal(m[1], &pg); err != nil {
		t.Fatal(err)
	}
	tri, rep := judged(doc.Findings), judged(pg.Findings)
	t.Logf("triage %v; report %v", tri, rep)
	if !slices.Equal(tri, rep) {
		t.Errorf("triage judged %v, the report %v", tri, rep)
	}
	for _, fs := range [][]triage.Finding{doc.Findings, pg.Findings} {
		i := slices.IndexFunc(fs, func(f triage.Finding) bool { return f.Rule == "cpu.thread_pct" })
		if i < 0 || fs[i].Severity != triage.Critical || !strings.Contains(fs[i].Title, "top: Workload.Cpu.HotA") {
			t.Errorf("no saturated thread named with HotA: %+v", fs)
		}
	}
}
