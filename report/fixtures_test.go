package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/heap"
	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/stacks"
)

// Report tests on the fixtures (testdata/traces). The goldens were checked
// against the workload's own reports and clrspy's canonical dumps of the
// same traces (clrspy stat --events).

// TestGCTextFixture: workstation GCs of every generation and kind; the
// counts are the runtime's (GC.CollectionCount 40/13/5: 27 gen0, 8 gen1, 5
// gen2 GCs).
func TestGCTextFixture(t *testing.T) {
	res := gcResult(t, tracetest.Path(t, "gc-wks.nettrace"))
	var b bytes.Buffer
	if err := WriteGCText(&b, Input{Source: "gc-wks.nettrace", Complete: true}, res); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"gc-wks.nettrace: 40 GCs, 21.86% of 0.423 s paused, longest 14.34 ms (GC 9, 1N)", "by type: NonConcurrent 34 Background 5 Foreground 1",
		"\n    0     27 ", "\n    1      8 ", "\n    2      5 ", "SuspendForGCPrep      5"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("text report lacks %q", s)
		}
	}
	tracetest.Golden(t, "gc-wks.txt", b.Bytes())
}

// cutInput describes the cut fixture as a source reports it.
var cutInput = func() Input {
	off := int64(25648)
	return Input{Source: "gc-wks.truncated.nettrace", Events: 464, Truncated: true, TruncatedAt: &off,
		Partial: []string{"the trace is truncated at offset 25648 (inside EventBlock): only the events before the cut are counted"}}
}()

// TestGCTextTruncatedFixture: the cut copy reports the 25th GC as
// incomplete.
func TestGCTextTruncatedFixture(t *testing.T) {
	res := gcResult(t, tracetest.Path(t, "gc-wks.truncated.nettrace"))
	var b bytes.Buffer
	if err := WriteGCText(&b, cutInput, res); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), "PARTIAL REPORT: the trace is truncated at offset 25648") || !strings.Contains(b.String(), "25 GCs, 28.17% of 0.218 s paused, longest 14.34 ms (GC 9, 1N), p99 14.34 ms, 1 incomplete") {
		t.Errorf("text report:\n%s", b.String())
	}
	tracetest.Golden(t, "gc-wks.truncated.txt", b.Bytes())
}

// TestGCJSONFixture: nine induced blocking GCs, each stopping the program
// once for the GC; generations as the runtime counted them.
func TestGCJSONFixture(t *testing.T) {
	w := tracetest.Workload(t, "gc-induced.nettrace")
	res := gcResult(t, tracetest.Path(t, "gc-induced.nettrace"))
	var b bytes.Buffer
	if err := WriteGCJSON(&b, Input{Source: "gc-induced.nettrace", Complete: true}, res); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Summary struct {
			GCCount      int     `json:"gc_count"`
			TotalPauseMS float64 `json:"total_pause_ms"`
			ByGen        map[string]struct {
				Count int `json:"count"`
			} `json:"by_generation"`
			Reasons []struct {
				Reason string `json:"reason"`
				Count  int    `json:"count"`
			} `json:"suspensions_by_reason"`
		} `json:"summary"`
		GCs []struct {
			Number  int     `json:"number"`
			Gen     string  `json:"gen"`
			Reason  string  `json:"reason"`
			PauseMS float64 `json:"pause_ms"`
			Induced bool    `json:"induced"`
		} `json:"gcs"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	s := doc.Summary
	byGen := [3]int{s.ByGen["gen0"].Count, s.ByGen["gen1"].Count, s.ByGen["gen2"].Count}
	if s.GCCount != w.Gen0 || len(doc.GCs) != w.Gen0 || byGen != tracetest.GCsByGeneration(w) {
		t.Errorf("%d GCs (%d rows), by generation %v; the runtime counted %d, %v", s.GCCount, len(doc.GCs), byGen, w.Gen0, tracetest.GCsByGeneration(w))
	}
	if i := slices.IndexFunc(s.Reasons, func(r struct {
		Reason string `json:"reason"`
		Count  int    `json:"count"`
	}) bool {
		return r.Reason == "SuspendForGC"
	}); i < 0 || s.Reasons[i].Count != w.Gen0 {
		t.Errorf("suspensions by reason %+v", s.Reasons)
	}
	var sum float64
	for i, g := range doc.GCs {
		sum += g.PauseMS
		if !g.Induced || g.Reason != "Induced" || g.Number != i+1 || !strings.HasSuffix(g.Gen, "NI") {
			t.Errorf("GC row %+v", g)
		}
	}
	if d := sum - s.TotalPauseMS; d > 1e-6 || d < -1e-6 {
		t.Errorf("pauses add up to %f, total %f", sum, s.TotalPauseMS)
	}
	tracetest.Golden(t, "gc-induced.json", b.Bytes())
}

// TestGCCSVFixture: one row per server GC, each over both heaps.
func TestGCCSVFixture(t *testing.T) {
	res := gcResult(t, tracetest.Path(t, "gc-server.nettrace"))
	var b bytes.Buffer
	if err := WriteGCCSV(&b, res); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	w := tracetest.Workload(t, "gc-server.nettrace")
	if len(rows) != 1+w.Gen0 || len(rows[0]) != 30 || rows[0][0] != "Num" {
		t.Fatalf("%d rows, header %v", len(rows), rows[0])
	}
	gens := map[string]int{}
	for i, r := range rows[1:] {
		if r[0] != strconv.Itoa(i+1) {
			t.Errorf("row %d is GC %s", i, r[0])
		}
		gens[r[3]]++
	}
	if gens["0N"] != 1 || gens["1N"] != 8 || gens["2N"]+gens["2B"] != 3 || gens["2B"] != 1 {
		t.Errorf("GCs by generation and kind %v", gens)
	}
}

// TestLocksReportsFixture: the contention workload's 17 waits on its one
// Monitor, by its four threads (the OS ids the workload reported).
func TestLocksReportsFixture(t *testing.T) {
	w := tracetest.Workload(t, "contention.nettrace")
	var tids []uint64
	if err := w.Get("tids", &tids); err != nil {
		t.Fatal(err)
	}
	res, hdr := locksOf(t, tracetest.Path(t, "contention.nettrace"))
	var text bytes.Buffer
	if err := WriteLocksText(&text, Input{Source: "contention.nettrace", Complete: true}, res); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"17 waits on 1 lock(s)", "owner values are OS thread ids", "System.Threading.Monitor.Enter_Slowpath(class System.Object)"} {
		if !strings.Contains(text.String(), s) {
			t.Errorf("text report lacks %q", s)
		}
	}
	tracetest.Golden(t, "locks-contention.txt", text.Bytes())

	var js bytes.Buffer
	if err := WriteLocksJSON(&js, NewLocksDocument(Input{Source: "contention.nettrace", Complete: true}, res)); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Summary map[string]any `json:"summary"`
		Locks   []map[string]any
		Threads []struct {
			OSThreadID uint64 `json:"os_thread_id"`
		} `json:"threads"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	var threads []uint64
	for _, th := range doc.Threads {
		threads = append(threads, th.OSThreadID)
	}
	slices.Sort(threads)
	if doc.Summary["contentions"] != 17.0 || doc.Summary["unpaired"] != 0.0 || len(doc.Locks) != 1 || !slices.Equal(threads, tids) {
		t.Errorf("summary %v, %d locks, threads %v (workload %v)", doc.Summary, len(doc.Locks), threads, tids)
	}
	tracetest.Golden(t, "locks-contention.json", js.Bytes())

	var pb bytes.Buffer
	if err := WriteLocksPprof(&pb, res, hdr.SyncTimeUTC, 400*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	p, err := profile.Parse(&pb)
	if err != nil {
		t.Fatal(err)
	}
	var n, d int64
	for _, s := range p.Sample {
		n += s.Value[0]
		d += s.Value[1]
	}
	if n != 17 || d != res.Summary.TotalNs || p.CheckValid() != nil {
		t.Errorf("pprof: %d contentions, %d ns (want %d), valid: %v", n, d, res.Summary.TotalNs, p.CheckValid())
	}
}

// TestHeapReportsFixture: heap-alloc's 637 sampled allocations, nearly all
// the churn loop's byte arrays and nodes; gc-induced's profile has one
// sample per allocation tick, the kept objects still in use.
func TestHeapReportsFixture(t *testing.T) {
	res, sym := replayHeap(t, tracetest.Path(t, "heap-alloc.nettrace"))
	d := NewHeapDocument(Input{Source: "heap-alloc.nettrace", Complete: true}, res, heap.Summarize(res, sym))
	var js bytes.Buffer
	if err := WriteHeapJSON(&js, d); err != nil {
		t.Fatal(err)
	}
	var m struct {
		GCs     int `json:"gcs"`
		Tracked int `json:"tracked_objects"`
		Alive   int `json:"alive_at_end"`
		Types   []struct {
			Type    string `json:"type"`
			Sampled int    `json:"sampled"`
		} `json:"types"`
	}
	if err := json.Unmarshal(js.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	if m.GCs != 25 || m.Tracked != 637 || len(m.Types) < 2 || m.Types[0].Type != "System.Byte[]" || m.Types[0].Sampled != 427 ||
		m.Types[1].Type != "Node" || m.Types[1].Sampled != 187 {
		t.Errorf("heap document %+v", m)
	}
	tracetest.Golden(t, "heap-alloc.json", js.Bytes())
	var text bytes.Buffer
	if err := WriteHeapText(&text, d, 5); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"25 GCs, 637 sampled objects followed", "Workload.Churn.Run(", "contradictions: 0"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, text.String())
		}
	}

	res, sym = replayHeap(t, tracetest.Path(t, "gc-induced.nettrace"))
	var pb bytes.Buffer
	if err := WriteHeapPprof(&pb, res, sym, res.EndNs); err != nil {
		t.Fatal(err)
	}
	p, err := profile.Parse(&pb)
	if err != nil {
		t.Fatal(err)
	}
	live := 0
	for _, s := range p.Sample {
		if s.Value[2] > 0 {
			live++
		}
	}
	if len(p.Sample) != 26 || live != 21 || p.CheckValid() != nil {
		t.Errorf("%d samples, %d in use", len(p.Sample), live)
	}
}

// TestProfileReportsFixture: the cpu workload's profile in every format.
func TestProfileReportsFixture(t *testing.T) {
	p := buildProfile(t, tracetest.Path(t, "cpu.nettrace"), stacks.Options{})
	var folded bytes.Buffer
	if err := WriteFolded(&folded, p, FoldedOptions{}); err != nil {
		t.Fatal(err)
	}
	var total, hotA, hotB int64
	for _, line := range strings.Split(strings.TrimSuffix(folded.String(), "\n"), "\n") {
		i := strings.LastIndexByte(line, ' ')
		n, err := strconv.ParseInt(line[i+1:], 10, 64)
		if err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		total += n
		if strings.Contains(line[:i], ";Workload.Cpu.HotA(int32)") {
			hotA += n
		}
		if strings.Contains(line[:i], ";Workload.Cpu.HotB(int32)") {
			hotB += n
		}
	}
	if total != 822 || hotA != 482 || hotB != 142 {
		t.Errorf("folded: %d samples, HotA %d, HotB %d", total, hotA, hotB)
	}
	tracetest.Golden(t, "cpu.folded", folded.Bytes())

	var ss bytes.Buffer
	if err := WriteSpeedscope(&ss, p, "cpu"); err != nil {
		t.Fatal(err)
	}
	var doc ssFile
	if err := json.Unmarshal(ss.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Profiles) != 1 || doc.Profiles[0].EndValue != p.DurationNanos+p.PeriodNanos {
		t.Errorf("speedscope: %d profiles", len(doc.Profiles))
	}
	tracetest.Golden(t, "cpu.speedscope.json", ss.Bytes())

	var pb bytes.Buffer
	if err := WritePprof(&pb, p); err != nil {
		t.Fatal(err)
	}
	pp, err := profile.Parse(&pb)
	if err != nil || pp.CheckValid() != nil {
		t.Fatal(err, pp.CheckValid())
	}
	var count, external int64
	for _, s := range pp.Sample {
		count += s.Value[0]
		if s.Label["kind"][0] == "external" {
			external += s.Value[0]
		}
	}
	if count != 822 || external != 63 {
		t.Errorf("pprof: %d samples, %d external", count, external)
	}

	var html bytes.Buffer
	if err := WriteFlameGraph(&html, p, FlameOptions{Title: "cpu <&>"}); err != nil {
		t.Fatal(err)
	}
	if page := html.String(); !strings.Contains(page, "cpu &lt;&amp;&gt;") || !strings.Contains(page, "Workload.Cpu.HotA(int32)") || strings.Contains(page, "<script src") {
		t.Error("flame graph page: title not escaped, HotA missing or an external script")
	}
}

// TestStatFixture: the stat document of the cut copy says where the cut
// is and which event it split.
func TestStatFixture(t *testing.T) {
	r := tracetest.Open(t, "gc-wks.truncated.nettrace", nettrace.NewReader)
	sum := nettrace.NewSummary()
	var first, last int64
	end := tracetest.ReadAll(t, r, func(ev *nettrace.Event) {
		if first == 0 {
			first = ev.Timestamp
		}
		last = ev.Timestamp
		sum.Add(ev)
	})
	var te *nettrace.TruncatedError
	if !errors.As(end, &te) {
		t.Fatalf("end %v", end)
	}
	off := te.Offset
	in := Input{Source: "gc-wks.truncated.nettrace", Events: 464, Truncated: true, TruncatedAt: &off}
	d := BuildStat(in, r, sum, analysis.End{Events: 464, Truncated: te, FirstTimestamp: first, LastTimestamp: last})
	if !d.Truncated || d.TruncatedAt == nil || *d.TruncatedAt != 25648 || d.Events != 464 || d.EventsLost != 0 || d.CutEvent == "" {
		t.Errorf("stat %+v", d)
	}
	var b bytes.Buffer
	if err := WriteStatText(&b, d); err != nil {
		t.Fatal(err)
	}
	tracetest.Golden(t, "stat-gc-wks.truncated.txt", b.Bytes())
}
