package report

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/clrspy/clrspy/heap"
	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/stacks"
)

// replayHeapChurn replays testdata/traces/heap-churn.nettrace.gz (3,197
// samples, up to 390 alive at once) with a 32-object reservoir.
func replayHeapChurn(t *testing.T) (*heap.Result, *stacks.Symbols) {
	t.Helper()
	r := tracetest.OpenFile(t, tracetest.Path(t, "heap-churn.nettrace.gz"), func(in io.Reader) (*nettrace.Reader, error) {
		z, err := gzip.NewReader(in)
		if err != nil {
			return nil, err
		}
		return nettrace.NewReader(z)
	})
	tr := heap.New(r.Header(), heap.Options{MaxObjects: 32, Seed: 1})
	sym := stacks.NewSymbols(r.Header())
	if err := tracetest.ReadAll(t, r, func(ev *nettrace.Event) {
		tr.Event(ev)
		sym.Event(ev)
	}); err != nil {
		t.Fatal(err)
	}
	tr.Finish()
	return tr.Result(), sym
}

// TestHeapReservoirReport: when the reservoir dropped samples, the text
// and JSON reports say so (limits, a note, the evicted count), the objects
// listed carry their weight, and the pprof profile is made of the weighted
// tallies, one sample per type and stack, adding up to the tables.
func TestHeapReservoirReport(t *testing.T) {
	res, sym := replayHeapChurn(t)
	st := res.Stats
	if st.Evicted == 0 || st.NotFollowed == 0 || res.Complete() {
		t.Fatalf("the reservoir did not bind: %+v", st)
	}
	sum := heap.Summarize(res, sym)
	d := NewHeapDocument(Input{Source: "heap-churn", Complete: true}, res, sum)
	AddHeapObjects(d, res, sym)
	var buf bytes.Buffer
	if err := WriteHeapJSON(&buf, d); err != nil {
		t.Fatal(err)
	}
	var m struct {
		Limits  map[string]int   `json:"limits"`
		Notes   []string         `json:"notes"`
		Objects []map[string]any `json:"objects"`
	}
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	if m.Limits["max_objects"] != 32 || m.Limits["evicted"] != st.Evicted || m.Limits["samples_not_followed"] != st.NotFollowed {
		t.Errorf("limits %v, stats %+v", m.Limits, st)
	}
	if len(m.Notes) == 0 || !strings.Contains(m.Notes[0], "at most 32 objects followed at once") {
		t.Errorf("notes %q", m.Notes)
	}
	weighted := 0
	for _, o := range m.Objects {
		if w, ok := o["weight"].(float64); ok && w > 1 {
			weighted++
		}
	}
	if weighted == 0 {
		t.Errorf("no listed object carries a weight above 1")
	}
	var text bytes.Buffer
	if err := WriteHeapText(&text, d, 5); err != nil {
		t.Fatal(err)
	}
	if want := "evicted by the reservoir), "; !strings.Contains(text.String(), want) {
		t.Errorf("text lacks %q:\n%s", want, text.String())
	}
	var pb bytes.Buffer
	if err := WriteHeapPprof(&pb, res, sym, res.EndNs); err != nil {
		t.Fatal(err)
	}
	p, err := profile.Parse(&pb)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Sample) != len(res.Tallies) {
		t.Errorf("%d pprof samples, want one per tally (%d)", len(p.Sample), len(res.Tallies))
	}
	var alloc, inuse float64
	for _, s := range p.Sample {
		alloc += float64(s.Value[1])
		inuse += float64(s.Value[3])
	}
	if math.Abs(alloc-sum.Total.EstBytes) > float64(len(p.Sample)) || math.Abs(inuse-sum.Total.LiveBytes) > float64(len(p.Sample)) {
		t.Errorf("pprof alloc %.0f in use %.0f, tables %.0f and %.0f", alloc, inuse, sum.Total.EstBytes, sum.Total.LiveBytes)
	}
}
