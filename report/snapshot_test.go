package report

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/gcpause"
	"io"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/clrspy/clrspy/heapgraph"
	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/nettrace"
)

func graphFixture(t *testing.T) *heapgraph.Graph {
	t.Helper()
	return graphFile(t, "heap-graph.nettrace.gz")
}

func graphFile(t *testing.T, name string) *heapgraph.Graph {
	t.Helper()
	r := tracetest.OpenFile(t, tracetest.Path(t, name), func(in io.Reader) (*nettrace.Reader, error) {
		z, err := gzip.NewReader(in)
		if err != nil {
			return nil, err
		}
		return nettrace.NewReader(z)
	})
	// As the commands compose it: the pause analysis hands the dump GC's
	// stop (its pause, and when the snapshot was taken) to the builder.
	set := analysis.NewSet()
	gcpause.In(set, gcpause.Options{MaxGCs: 1, MaxSuspensions: 1})
	b := analysis.Add(set, heapgraph.Spec, func(h *nettrace.Header) *heapgraph.Builder { return heapgraph.NewBuilder(h, nil) })
	set.Start(r.Header())
	if err := tracetest.ReadAll(t, r, set.Event); err != nil {
		t.Fatal(err)
	}
	g, err := b.Get().Graph()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestSnapshotPprof: the profile's samples sum to the snapshot's objects
// and bytes, and the leaves' stacks are retention paths: GraphLeaf's ends
// in the static Holder's frame and the [static] root kind.
func TestSnapshotPprof(t *testing.T) {
	g := graphFixture(t)
	var buf bytes.Buffer
	if err := WriteSnapshotPprof(&buf, Input{Source: "x", Complete: true}, g); err != nil {
		t.Fatal(err)
	}
	p, err := profile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var objects, bytes int64
	leaf := false
	for _, s := range p.Sample {
		objects += s.Value[0]
		bytes += s.Value[1]
		var frames []string
		for _, l := range s.Location {
			frames = append(frames, l.Line[0].Function.Name)
		}
		if frames[0] == "Workload.GraphLeaf" {
			leaf = strings.Join(frames, " < ") == "Workload.GraphLeaf < Workload.GraphItem < Workload.GraphItem[] < Workload.GraphHolder < static Holder < [static]" && s.Value[0] == 2000
			if !leaf {
				t.Errorf("GraphLeaf's sample %v %v", frames, s.Value)
			}
		}
	}
	if objects != int64(g.N) || bytes != int64(g.Bytes) || !leaf {
		t.Errorf("samples sum to %d objects, %d bytes; the snapshot has %d, %d (GraphLeaf's path found: %v)", objects, bytes, g.N, g.Bytes, leaf)
	}
}

// TestSnapshotDocuments: the JSON documents use snake_case keys and the
// text report leads with the totals and the types by retained bytes.
func TestSnapshotDocuments(t *testing.T) {
	g := graphFixture(t)
	m, _ := g.Matcher("GraphLeaf")
	d := NewSnapshotDocument(Input{Source: "x", Complete: true}, g, SnapshotOptions{Top: 5, Why: "GraphLeaf", WhyMatcher: m, TreeDepth: 2, TreeWidth: 2})
	var buf bytes.Buffer
	if err := WriteSnapshotJSON(&buf, d); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"objects", "bytes", "complete", "events_lost", "types", "paths", "tree", "pause_ms"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("no %q in the document", k)
		}
	}
	if !strings.Contains(buf.String(), `"retained_bytes": 144056`) || !strings.Contains(buf.String(), `"root_kind": "static"`) {
		t.Errorf("document lacks the holder's retained bytes or the static path:\n%s", buf.String())
	}
	buf.Reset()
	if err := WriteSnapshotText(&buf, d); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(buf.String(), "\n")
	if !strings.HasPrefix(lines[0], "heap snapshot of x: 4491 objects") || !strings.Contains(buf.String(), "[static Holder] Workload.GraphHolder > Workload.GraphItem[] > Workload.GraphItem > Workload.GraphLeaf") {
		t.Errorf("text report:\n%s", buf.String())
	}
}

// TestSnapshotRetainedBound: a type whose retained bytes are the
// dominator tree's lower bound says so: retained_exact false in JSON,
// ">=" and one note line in the text; exact ones carry no mark.
func TestSnapshotRetainedBound(t *testing.T) {
	d := &SnapshotDocument{Input: Input{Source: "x", Complete: true}, Objects: 3, Bytes: 300, Types: []SnapshotTypeJSON{
		{Type: "App.Exact", Count: 1, Bytes: 100, RetainedBytes: 200, RetainedExact: true},
		{Type: "App.Bound", Count: 2, Bytes: 100, RetainedBytes: 100},
	}}
	var buf bytes.Buffer
	if err := WriteSnapshotJSON(&buf, d); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"retained_exact": true`) || !strings.Contains(buf.String(), `"retained_exact": false`) {
		t.Errorf("JSON without retained_exact:\n%s", buf.String())
	}
	buf.Reset()
	if err := WriteSnapshotText(&buf, d); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	if !strings.Contains(text, ">=100 B  100 B      2  App.Bound") || strings.Contains(text, ">=200 B") ||
		!strings.Contains(text, ">=: the dominator tree's lower bound of retained bytes (1 of the types listed)") {
		t.Errorf("text report:\n%s", text)
	}
}

// TestDanglingText: references to objects never described are counted
// with the objects they lead to, never "at 0 objects".
func TestDanglingText(t *testing.T) {
	for _, c := range []struct {
		m    heapgraph.Missing
		want string
	}{
		{heapgraph.Missing{DanglingEdges: 2767, DanglingObjects: 12}, "2767 references lead to 12 objects the heap walk never described"},
		{heapgraph.Missing{DanglingEdges: 2, DanglingObjects: 1}, "2 references lead to an object the heap walk never described"},
		{heapgraph.Missing{DanglingEdges: 1, DanglingObjects: 1}, "1 reference leads to an object the heap walk never described"},
		{heapgraph.Missing{DanglingEdges: 5}, "5 references lead to objects the heap walk never described"},
	} {
		if got := danglingText(c.m); got != c.want {
			t.Errorf("%+v: %q, want %q", c.m, got, c.want)
		}
	}
}

// TestSnapshotDiffText: the diff of the graph workload's two snapshots
// (the second after 500 more items, testdata/traces/README.md) is in
// human units, with the time between them (the dump GCs' events, 2.73 s)
// and the heap's growth rate; the JSON keeps the bytes and seconds.
func TestSnapshotDiffText(t *testing.T) {
	old, cur := graphFile(t, "heap-graph.nettrace.gz"), graphFile(t, "heap-graph-added.nettrace.gz")
	d := NewSnapshotDiffDocument(Input{Source: "a", Complete: true}, Input{Source: "b", Complete: true}, old, cur, heapgraph.Compare(old, cur), 30)
	if d.BytesDelta != 284838 || d.ObjectsDelta != 4451 || d.IntervalSec == nil || math.Abs(*d.IntervalSec-2.732) > 0.001 ||
		d.Before.TakenFrom != "trace" || d.Before.Taken != "2026-11-27T01:28:03.626066388Z" {
		t.Fatalf("diff %+v, interval %v", d, d.IntervalSec)
	}
	if want := 284838 * 60 / *d.IntervalSec; math.Abs(*d.BytesPerMin-want) > 1 {
		t.Errorf("bytes_per_min %v, want %v", *d.BytesPerMin, want)
	}
	var b strings.Builder
	if err := WriteSnapshotDiffText(&b, d); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	for _, want := range []string{
		"a (4491 objects, 231.3 KiB, taken 2026-11-27 01:28:03 UTC) -> b (8942 objects, 509.5 KiB, taken 2026-11-27 01:28:06 UTC)\n",
		"the heap grew by 278.2 KiB (+4451 objects) in 2.7 s: +6.0 MiB/min\n",
		"+35.2 KiB  140.7 KiB -> 175.9 KiB  [static Holder] Workload.GraphHolder",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("diff text lacks %q:\n%s", want, text)
		}
	}
	// Type names as .NET users read them in the text; the JSON keeps the
	// runtime's beside them.
	exact := "Entry[System.Int32,System.Diagnostics.Tracing.EventSource+EventMetadata][]"
	if !regexp.MustCompile(`(?m)^ +\+193\.2 KiB +\+21\.6 KiB +\+1 +0 +1 +Dictionary<Int32,EventSource\+EventMetadata>\+Entry\[\]$`).MatchString(text) ||
		strings.Contains(text, exact) || nameMap(d.TypeNames)[exact] != "Dictionary<Int32,EventSource+EventMetadata>+Entry[]" {
		t.Errorf("the dictionary's entries not named as users read them (type_names %q):\n%s", nameMap(d.TypeNames)[exact], text)
	}
	found := false
	for _, ty := range d.Types {
		found = found || ty.Type == exact
	}
	if !found {
		t.Errorf("the JSON's types lost the runtime's name %q", exact)
	}
	// GraphItem: +500 objects of 32 B each, in the table in KiB.
	if !regexp.MustCompile(`(?m)^ +\+31\.2 KiB +\+15\.6 KiB +\+500 +2000 +2500 +Workload\.GraphItem$`).MatchString(text) {
		t.Errorf("GraphItem's row not in human units:\n%s", text)
	}
	if regexp.MustCompile(`[+-]\d{5,}`).MatchString(text) {
		t.Errorf("a raw byte count in the text:\n%s", text)
	}
}

// TestDurationText: the time between snapshots, for people.
func TestDurationText(t *testing.T) {
	for sec, want := range map[float64]string{0.85: "850 ms", 12.34: "12.3 s", 302: "5 min 2 s", 7500: "2 h 5 min", -3: "-3.0 s"} {
		if got := durationText(sec); got != want {
			t.Errorf("durationText(%v) = %q, want %q", sec, got, want)
		}
	}
}
