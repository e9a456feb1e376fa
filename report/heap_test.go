//go:build compat

package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/clrspy/clrspy/heap"
	"github.com/clrspy/clrspy/internal/tracetest"
)

// TestHeapJSONObjver4: the documented JSON fields, with values that follow
// from the catalog (478 GCs, 35,458 AllocationTick v3 with addresses) and
// the hand-checked replay (heap/testdata/real_traces.golden.json).
func TestHeapJSONObjver4(t *testing.T) {
	res, sym := replayHeap(t, tracetest.CompatPath(t, "perfview__eventpipe-dotnetcore3.0-win-x64-objver4.nettrace"))
	d := NewHeapDocument(Input{Source: "objver4", Complete: true}, res, heap.Summarize(res, sym))
	var buf bytes.Buffer
	if err := WriteHeapJSON(&buf, d); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	if m["gcs"] != 478.0 || m["tracked_objects"] != 35458.0 || m["alive_at_end"] != 37.0 {
		t.Errorf("gcs %v tracked %v alive %v", m["gcs"], m["tracked_objects"], m["alive_at_end"])
	}
	types := m["types"].([]any)
	first := types[0].(map[string]any)
	for _, k := range []string{"type", "sampled", "est_bytes", "survived_one_gc_pct", "reached_gen2_pct", "died_in_gen2_pct", "alive_at_end"} {
		if _, ok := first[k]; !ok {
			t.Errorf("type entry lacks %q: %v", k, first)
		}
	}
	// System.Char[] dominates the trace's ticks (PerfView baseline order).
	if first["type"] != "System.Char[]" || first["sampled"] != 23133.0 {
		t.Errorf("first type %v", first)
	}
	sum := 0.0
	for _, ty := range types {
		sum += ty.(map[string]any)["sampled"].(float64)
	}
	if sum != 35458 {
		t.Errorf("types sum to %v samples, want 35458", sum)
	}
	var text bytes.Buffer
	if err := WriteHeapText(&text, d, 5); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"478 GCs, 35458 sampled objects followed (35421 dead, 37 alive at end)", "System.Char[]", "age at death", "contradictions: 0"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, text.String())
		}
	}
}

// TestHeapPprof: the profile parses and carries the four heap sample types;
// alloc totals equal the summed estimates and in-use only the survivors.
func TestHeapPprof(t *testing.T) {
	res, sym := replayHeap(t, tracetest.CompatPath(t, "filtrace__wait.nettrace"))
	var buf bytes.Buffer
	if err := WriteHeapPprof(&buf, res, sym, res.EndNs); err != nil {
		t.Fatal(err)
	}
	p, err := profile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, st := range p.SampleType {
		types = append(types, st.Type+"/"+st.Unit)
	}
	if strings.Join(types, ",") != "alloc_objects/count,alloc_space/bytes,inuse_objects/count,inuse_space/bytes" {
		t.Fatalf("sample types %v", types)
	}
	// filtrace wait: 11 ticks followed, 3 alive at the end (golden replay).
	if len(p.Sample) != 11 {
		t.Fatalf("%d samples, want 11", len(p.Sample))
	}
	var alloc, inuse, live int64
	for _, s := range p.Sample {
		alloc += s.Value[1]
		inuse += s.Value[3]
		if s.Value[2] > 0 {
			live++
		}
		if !strings.HasPrefix(s.Location[0].Line[0].Function.Name, "[type] ") {
			t.Errorf("leaf frame %q is not the type", s.Location[0].Line[0].Function.Name)
		}
	}
	var want float64
	for _, o := range res.Objects {
		want += o.EstBytes
	}
	if live != 3 || alloc != int64(want+0.5) && alloc-int64(want) > 11 || inuse <= 0 || inuse >= alloc {
		t.Errorf("live %d alloc %d (want ≈%.0f) inuse %d", live, alloc, want, inuse)
	}
}
