package report

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/runinfo"
	"github.com/clrspy/clrspy/source"
	"github.com/clrspy/clrspy/stacks"
)

func pageOf(t *testing.T, name string) *Page {
	t.Helper()
	st, err := source.Open(source.Spec{File: tracetest.Path(t, name)})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	an := NewPageAnalyses(st.Header(), PageAnalysesOptions{})
	end, err := st.Run(an.Analyzers()...)
	if err != nil {
		t.Fatal(err)
	}
	var stats analysis.Stats
	for _, a := range an.Analyzers() {
		stats.Add(a.Stats())
	}
	pp := an.Parts()
	pp.Input = NewInput(st.Name, st.Live(), end, stats)
	pp.FirstNanos, pp.LastNanos = st.Header().Nanos(end.FirstTimestamp), st.Header().Nanos(end.LastTimestamp)
	return NewPage(pp)
}

// The composite workload's page: every section but the heap (no movement
// events), with the recording's facts (testdata/traces/README.md).
func TestPageMixed(t *testing.T) {
	p := pageOf(t, "composite.nettrace")
	if p.GCs.Len() != 175 || p.Summary.GCsStarted != 175 || p.Summary.ByGeneration["gen2"].Count != 27 {
		t.Errorf("%d GC rows, summary %d started, %d gen2", p.GCs.Len(), p.Summary.GCsStarted, p.Summary.ByGeneration["gen2"].Count)
	}
	for i := 1; i < p.GCs.Len(); i++ {
		if p.GCs.Start[i] < p.GCs.Start[i-1] || p.GCs.Number[i] != p.GCs.Number[i-1]+1 {
			t.Fatalf("row %d: GC %d at %.3f ms after GC %d at %.3f", i, p.GCs.Number[i], p.GCs.Start[i], p.GCs.Number[i-1], p.GCs.Start[i-1])
		}
	}
	if p.Run.Runtime != "10.0.12" || p.Run.GC != "workstation, concurrent" || !strings.HasSuffix(p.Run.CommandLine, "composite seconds=1.5") {
		t.Errorf("run %+v", p.Run)
	}
	if p.Locks == nil || p.Locks.Contentions != 29 || len(p.Locks.Locks) != 1 {
		t.Errorf("locks %+v", p.Locks)
	}
	if p.Heap != nil {
		t.Errorf("heap section without movement events: %+v", p.Heap)
	}
	if !p.Input.Complete || p.T1MS <= p.T0MS {
		t.Errorf("input %+v, axis %.3f–%.3f", p.Input, p.T0MS, p.T1MS)
	}
	checkFlame(t, p.CPU, 1283)
	// The runtime's sampler samples waiting threads too: its view says so.
	if p.CPU.Label != LabelWall || len(p.Views) != 0 {
		t.Errorf("label %q, %d more views", p.CPU.Label, len(p.Views))
	}
}

// TestPageViews: a profile of another sampler (perf's CPU samples) is the
// flame graph panel's first view, under its label, and the trace's own
// samples follow as the wall-clock view; both are in the page's data.
func TestPageViews(t *testing.T) {
	st, err := source.Open(source.Spec{File: tracetest.Path(t, "composite.nettrace")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	an := NewPageAnalyses(st.Header(), PageAnalysesOptions{})
	if _, err := st.Run(an.Analyzers()...); err != nil {
		t.Fatal(err)
	}
	pp := an.Parts()
	cpu := &stacks.Profile{
		Frames:      []stacks.Frame{{Name: "Hot()", Kind: stacks.KindManaged}, {Name: "Main()", Kind: stacks.KindManaged}, {Name: "memset", Module: "libc.so.6", Kind: stacks.KindNative}},
		Threads:     []stacks.Thread{{ID: 7}},
		Samples:     []stacks.Sample{{Stack: []int32{0, 1}, Count: 30, Nanos: 30e6}, {Stack: []int32{2, 0, 1}, Count: 10, Nanos: 10e6}},
		Total:       40,
		CPUTime:     true,
		PeriodNanos: 1e6,
	}
	pp.Views = []FlameView{{Label: SampleLabel(cpu), Profile: cpu}}
	p := NewPage(pp)
	if p.CPU == nil || p.CPU.Label != LabelCPU || len(p.Views) != 1 || p.Views[0].Label != LabelWall {
		t.Fatalf("views: first %+v, then %d", p.CPU, len(p.Views))
	}
	checkFlame(t, p.CPU, 40)
	checkFlame(t, p.Views[0], 1283)
	var buf bytes.Buffer
	if err := WritePage(&buf, p); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"label":"CPU"`, `"views":[{"label":"wall clock, managed threads"`} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("page data lacks %s", want)
		}
	}
}

// checkFlame checks the call tree encoding: depths in depth-first order,
// every stack's runs adding up to its count, counts to the total.
func checkFlame(t *testing.T, f *Flame, total int64) {
	t.Helper()
	if f == nil || f.Total != total {
		t.Fatalf("flame %v", f)
	}
	for i, d := range f.NodeDepth {
		if d < 0 || i == 0 && d != 0 || i > 0 && d > f.NodeDepth[i-1]+1 {
			t.Fatalf("node %d at depth %d after %d", i, d, f.NodeDepth[max(i-1, 0)])
		}
		if int(f.NodeFrame[i]) >= len(f.Frames) {
			t.Fatalf("node %d: frame %d of %d", i, f.NodeFrame[i], len(f.Frames))
		}
	}
	var sum int64
	r := 0
	for s, c := range f.StackCount {
		var n, bin int64
		for k := 0; k < int(f.StackRuns[s]); k++ {
			bin += int64(f.RunBin[r])
			if k > 0 && f.RunBin[r] <= 0 {
				t.Fatalf("stack %d: bins not ascending", s)
			}
			n += int64(f.RunCount[r])
			r++
		}
		if n != c {
			t.Fatalf("stack %d: runs hold %d samples, count %d", s, n, c)
		}
		if f.BinMS > 0 && float64(bin)*f.BinMS > 60_000 {
			t.Fatalf("stack %d: last bin at %.0f ms", s, float64(bin)*f.BinMS)
		}
		sum += c
	}
	if r != len(f.RunBin) || sum != total {
		t.Errorf("%d runs read of %d; stacks sum to %d, total %d", r, len(f.RunBin), sum, total)
	}
}

// A trace with survival and movement events gets the heap table, with
// survival figures.
func TestPageHeap(t *testing.T) {
	p := pageOf(t, "heap-alloc.nettrace")
	if p.Heap == nil || !p.Heap.Movement || p.Heap.Sampled == 0 || len(p.Heap.Types) == 0 {
		t.Fatalf("heap %+v", p.Heap)
	}
	withSurvival := 0
	for _, ty := range p.Heap.Types {
		if ty.Survived != nil {
			withSurvival++
		}
	}
	if withSurvival == 0 {
		t.Error("no type has a survival figure")
	}
}

// Unknown values are null in the page's columns; others have at most 3
// decimals.
func TestNumColJSON(t *testing.T) {
	b, err := json.Marshal(numCol{1.23456, math.NaN(), 0, -2.0005, 1e6})
	if err != nil || string(b) != "[1.235,null,0,-2.001,1000000]" && string(b) != "[1.235,null,0,-2,1000000]" {
		t.Errorf("%s %v", b, err)
	}
}

// The page is one file: its data cannot close the script element, and it
// may talk to nothing (offline) or only to its own server (live).
func TestWritePage(t *testing.T) {
	p := &Page{Title: `</script><b>x`, GCs: &GCColumns{}, Suspensions: &SuspColumns{}, Run: runInfoWith("</script>")}
	var b bytes.Buffer
	if err := WritePage(&b, p); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	if strings.Count(html, "</script>") != 2 || !strings.Contains(html, "&lt;/script&gt;&lt;b&gt;x</title>") || !strings.Contains(html, "connect-src 'none'") {
		t.Errorf("offline page:\n%.600s", html)
	}
	b.Reset()
	if err := WriteLivePage(&b, LivePage{Title: "t", Socket: "ws", Targets: "targets.json"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "connect-src 'self'") || !strings.Contains(b.String(), `{"live":true,"title":"t","socket":"ws","targets":"targets.json"}`) {
		t.Errorf("live page:\n%.600s", b.String())
	}
}

func runInfoWith(cmd string) (r runinfo.Info) {
	r.CommandLine = cmd
	return r
}
