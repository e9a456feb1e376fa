package serve

import (
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/clrspy/clrspy/heapgraph"
	"github.com/clrspy/clrspy/internal/fleet"
	"github.com/clrspy/clrspy/internal/metrics"
	"github.com/clrspy/clrspy/internal/workload"
)

// heapTypes sums a heap profile's samples by their leaf location (the
// objects' type; the frames above it are the retention path): objects
// and bytes per type.
func heapTypes(t *testing.T, body []byte) (count, bytes map[string]int64, p *profile.Profile) {
	t.Helper()
	p, err := profile.ParseData(body)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.SampleType) != 2 || p.SampleType[0].Type != "inuse_objects" || p.SampleType[1].Type != "inuse_space" {
		t.Fatalf("sample types %v", p.SampleType)
	}
	count, bytes = map[string]int64{}, map[string]int64{}
	for _, s := range p.Sample {
		name := s.Location[0].Line[0].Function.Name
		count[name] += s.Value[0]
		bytes[name] += s.Value[1]
	}
	return count, bytes, p
}

// graphResult is what the graph workload measured about itself.
type graphResult struct{ holder, handle, stack int64 }

func graphEnd(t *testing.T, p *workload.Proc) graphResult {
	t.Helper()
	p.Stdin("exit\n")
	res, err := p.Wait(30 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var r graphResult
	if res.Get("holderBytes", &r.holder) != nil || res.Get("handleBytes", &r.handle) != nil || res.Get("stackBytes", &r.stack) != nil {
		t.Fatal("workload result lacks its byte counts")
	}
	return r
}

// checkGraph compares the heap profile of the graph workload
// (testdata/workloads/Workload/Graph.cs, items=3000) with what it
// built: its types' counts, and the bytes it allocated building each
// part (GC.GetAllocatedBytesForCurrentThread): the holder, its array,
// items and leaves; the handle's object; the parked thread's object.
// Each object is on one retention path, so the sums are exact.
func checkGraph(t *testing.T, count, bytes map[string]int64, r graphResult) {
	t.Helper()
	for name, want := range map[string]int64{"Workload.GraphItem": 3000, "Workload.GraphLeaf": 3000, "Workload.GraphHolder": 1,
		"Workload.GraphItem[]": 1, "Workload.GraphHandleOnly": 1, "Workload.GraphStackOnly": 1} {
		if got := count[name]; got != want {
			t.Errorf("%s: %d objects in the heap profile, the workload made %d", name, got, want)
		}
	}
	holder := bytes["Workload.GraphHolder"] + bytes["Workload.GraphItem[]"] + bytes["Workload.GraphItem"] + bytes["Workload.GraphLeaf"]
	if holder != r.holder {
		t.Errorf("the holder's part is %d bytes in the profile; the workload allocated %d building it", holder, r.holder)
	}
	if bytes["Workload.GraphHandleOnly"] != r.handle || bytes["Workload.GraphStackOnly"] != r.stack {
		t.Errorf("handle-only %d and stack-only %d bytes; the workload allocated %d and %d",
			bytes["Workload.GraphHandleOnly"], bytes["Workload.GraphStackOnly"], r.handle, r.stack)
	}
}

// TestHeapSnapshot: /debug/pprof/heap?pid=N is a heap snapshot of the
// graph workload taken on request, as a pprof profile whose per-type
// objects and bytes are the workload's own (as TestSnapshotLive checks
// `clrspy snapshot`); the leaf GraphLeaf objects' stacks go up to the
// static field Holder. A later snapshot names the types too (the runtime
// names each once while a session has the Type keyword, so the names
// carry over). A second request while one is being taken gets
// 409; a missing pid 400, an unknown one 404, in one line.
func TestHeapSnapshot(t *testing.T) {
	gs := startGraphServe(t, Config{})
	d, log, h, p, pid := gs.d, gs.log, gs.h, gs.p, gs.pid
	for url, code := range map[string]int{
		"/debug/pprof/heap":         400,
		"/debug/pprof/heap?pid=1":   404,
		"/debug/pprof/heap?pid=abc": 404,
	} {
		if rec := get(t, h, url); rec.Code != code || strings.Count(strings.TrimSpace(rec.Body.String()), "\n") > 0 {
			t.Errorf("%s: %d %q, want %d in one line", url, rec.Code, rec.Body.String(), code)
		}
	}
	// The second request once the first holds the target's slot (it
	// holds it from before its session opens until its answer is
	// written: a hundred milliseconds or more, against this loop's
	// millisecond). On a loaded machine this goroutine may not run
	// until the first has ended: then the pair is tried again.
	tg := d.lookup(pid)
	var rec *httptest.ResponseRecorder
	var start time.Time
	for try := 0; rec == nil; try++ {
		if try == 5 {
			t.Fatal("five snapshots ended before their slot was seen taken")
		}
		first := make(chan *httptest.ResponseRecorder, 1)
		start = time.Now()
		go func() { first <- get(t, h, "/debug/pprof/heap?pid="+pid) }()
		for waiting := true; waiting; time.Sleep(time.Millisecond) {
			if tg.snapshotting.busy.Load() {
				second := get(t, h, "/debug/pprof/heap?pid="+pid)
				if second.Code != http.StatusConflict {
					t.Errorf("a second snapshot at the same time: %d %q, want 409", second.Code, second.Body.String())
				}
				rec = <-first
				break
			}
			select {
			case r := <-first:
				t.Logf("a snapshot ended (%d) before its slot was seen taken: again", r.Code)
				waiting = false
			default:
			}
		}
	}
	t.Logf("the snapshot took %v", time.Since(start).Round(time.Millisecond))
	if rec.Code != 200 {
		t.Fatalf("heap: %d %s", rec.Code, rec.Body)
	}
	count, bytes, prof := heapTypes(t, rec.Body.Bytes())
	// Another snapshot: the runtime does not name the types again while
	// the monitoring session lives; the names are the first's.
	again := get(t, h, "/debug/pprof/heap?pid="+pid)
	if again.Code != 200 {
		t.Fatalf("second heap snapshot: %d %s", again.Code, again.Body)
	}
	count2, bytes2, _ := heapTypes(t, again.Body.Bytes())
	r := graphEnd(t, p)
	checkGraph(t, count2, bytes2, r)
	t.Logf("%d samples; comments %q; holder %d B", len(prof.Sample), prof.Comments, r.holder)
	if len(prof.Comments) != 0 {
		t.Errorf("the snapshot is partial: %q", prof.Comments)
	}
	checkGraph(t, count, bytes, r)
	// Retention paths: GraphLeaf <- GraphItem <- GraphItem[] <- GraphHolder <- the static
	// Workload.Graph.Holder (its class from the module's metadata).
	var viaHolder int64
	for _, s := range prof.Sample {
		var names []string
		for _, l := range s.Location {
			names = append(names, l.Line[0].Function.Name)
		}
		if names[0] == "Workload.GraphLeaf" && strings.Contains(strings.Join(names, " <- "),
			"Workload.GraphLeaf <- Workload.GraphItem <- Workload.GraphItem[] <- Workload.GraphHolder <- static Workload.Graph.Holder <- [static]") {
			viaHolder += s.Value[0]
		}
	}
	if viaHolder != 3000 {
		t.Errorf("%d GraphLeaf objects retained through the static Workload.Graph.Holder, want 3000", viaHolder)
	}
	if !strings.Contains(log.String(), "heap snapshot taken pid="+pid) {
		t.Errorf("no log line for the snapshot")
	}
}

// TestHeapSnapshotListen: a listen-mode target's snapshot goes through
// its reverse connection (the runtime connected to the daemon; it has no
// socket of its own to dial), with the same figures.
func TestHeapSnapshotListen(t *testing.T) {
	dir := t.TempDir()
	path, name := alias(t, dir)
	d, _ := run(t, Config{Config: fleet.Config{Names: []string{name}, DiagnosticPort: filepath.Join(dir, "port.sock"), NoAttach: true}})
	h, err := d.Handler(HandlerOptions{HeapEvery: -1, ProfileEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	p := startAs(t, path, []string{d.DiagnosticPortEnv()}, "graph", "items=3000")
	pid := strconv.Itoa(p.Pid)
	waitStderr(t, p, "graph ready")
	waitFor(t, 20*time.Second, "session open", func() bool { ti, _ := info(d, pid); return ti.State == "running" })
	if ti, _ := info(d, pid); ti.Kind != "listen" {
		t.Fatalf("target %+v, want listen mode", ti)
	}
	rec := get(t, h, "/debug/pprof/heap?pid="+pid)
	if rec.Code != 200 {
		t.Fatalf("heap: %d %s", rec.Code, rec.Body)
	}
	count, bytes, _ := heapTypes(t, rec.Body.Bytes())
	checkGraph(t, count, bytes, graphEnd(t, p))
}

// waitStderr waits until the workload's stderr holds want.
func waitStderr(t *testing.T, p *workload.Proc, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(p.Stderr(), want) {
		if time.Now().After(deadline) || p.Exited() {
			t.Fatalf("workload never printed %q:\n%s", want, p.Stderr())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestHeapGrowth: with SnapshotOnGen2Growth, the graph workload's first
// GC (its `gc` command) takes the baseline snapshot; the workload then
// adds 30,000 items (about 2 MB against a gen2 of a few hundred KB) and
// collects twice: gen2 grew by more than 20 %, so a second snapshot is taken,
// and the types that grew are logged at WARN and exported: GraphItem,
// GraphLeaf and the new GraphItem[] grew by exactly the bytes the
// workload allocated adding them.
func TestHeapGrowth(t *testing.T) {
	old := snapshotMinInterval
	snapshotMinInterval = 0
	t.Cleanup(func() { snapshotMinInterval = old })
	gs := startGraphServe(t, Config{SnapshotOnGen2Growth: 20})
	log, h, p, pid, name := gs.log, gs.h, gs.p, gs.pid, gs.name
	p.Stdin("gc\n")
	waitFor(t, 20*time.Second, "baseline snapshot", func() bool {
		return strings.Contains(log.String(), "heap snapshot taken as the baseline of gen2 growth pid="+pid)
	})
	p.Stdin("add 30000\n")
	waitStderr(t, p, "added 30000")
	// Objects move up one generation per GC: the second puts them in
	// gen2.
	p.Stdin("gc\ngc\n")
	waitFor(t, 20*time.Second, "growth logged", func() bool {
		return strings.Contains(log.String(), "gen2 grew since the last heap snapshot; the types that grew most pid="+pid)
	})
	p.Stdin("exit\n")
	res, err := p.Wait(30 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var added int64
	if res.Get("addedBytes", &added) != nil {
		t.Fatal("workload result lacks addedBytes")
	}
	// The exposition's series, the bytes of each type.
	grown := map[string]float64{}
	for _, l := range strings.Split(get(t, h, "/metrics").Body.String(), "\n") {
		rest, ok := strings.CutPrefix(l, `clrspy_heap_growth_bytes{pid="`+pid+`",process="`+name+`",type="`)
		if !ok {
			continue
		}
		ty, v, _ := strings.Cut(rest, `"} `)
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		grown[ty] = f
	}
	t.Logf("growth series %v; the workload added %d B", grown, added)
	if len(grown) == 0 || len(grown) > 10 {
		t.Fatalf("%d clrspy_heap_growth_bytes series, want 1 to 10", len(grown))
	}
	if sum := grown["Workload.GraphItem"] + grown["Workload.GraphLeaf"] + grown["Workload.GraphItem[]"]; int64(sum) != added ||
		grown["Workload.GraphItem"] == 0 || grown["Workload.GraphLeaf"] == 0 {
		t.Errorf("the workload's types grew by %.0f B (%v); it allocated %d B adding them", sum, grown, added)
	}
}

// TestSnapshotOnGen2GrowthFlag: a percentage that is not a positive
// finite number is refused in one line naming the flag.
func TestSnapshotOnGen2GrowthFlag(t *testing.T) {
	for _, v := range []float64{-1, math.NaN(), math.Inf(1)} {
		c := Config{SnapshotOnGen2Growth: v}
		err := c.check()
		if err == nil || !strings.HasPrefix(err.Error(), "--snapshot-on-gen2-growth ") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: %v", v, err)
		}
	}
	c := Config{SnapshotOnGen2Growth: 25}
	if err := c.check(); err != nil {
		t.Errorf("25: %v", err)
	}
}

// TestGrowthOf: the types whose own bytes grew, the largest first, at
// most metrics.MaxHeapGrowth; types that shrank or are new count from 0.
func TestGrowthOf(t *testing.T) {
	prev := map[string]heapgraph.TypeStat{"A": {Bytes: 100}, "B": {Bytes: 500}, "C": {Bytes: 10}}
	cur := map[string]heapgraph.TypeStat{"A": {Bytes: 400}, "B": {Bytes: 200}, "C": {Bytes: 10}, "D": {Bytes: 50}}
	for i := range 20 {
		cur["E"+strconv.Itoa(i)] = heapgraph.TypeStat{Bytes: 1}
	}
	g := growthOf(prev, cur)
	if len(g) != metrics.MaxHeapGrowth || g[0] != (metrics.HeapGrowth{Type: "A", Bytes: 300}) || g[1] != (metrics.HeapGrowth{Type: "D", Bytes: 50}) || g[2].Bytes != 1 {
		t.Errorf("growth %v", g)
	}
}
