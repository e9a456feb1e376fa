package triage

import (
	"bufio"
	"compress/gzip"
	"errors"
	"github.com/clrspy/clrspy/stacks"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/nettrace"
)

// TestThresholdsDocumented: docs/TRIAGE.md's thresholds table is the
// code's table, row for row (key, area, unit, warning, critical).
func TestThresholdsDocumented(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "docs", "TRIAGE.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var got []Threshold
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) < 6 {
			t.Fatalf("row %q: want 6 cells", line)
		}
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		warn, err1 := strconv.ParseFloat(cells[3], 64)
		crit, err2 := strconv.ParseFloat(cells[4], 64)
		if err := errors.Join(err1, err2); err != nil {
			t.Fatalf("row %q: %v", line, err)
		}
		if cells[5] == "" {
			t.Errorf("row %s: no reason given", cells[0])
		}
		got = append(got, Threshold{Key: strings.Trim(cells[0], "`"), Area: Area(cells[1]), Unit: cells[2], Warning: warn, Critical: crit})
	}
	if len(got) != len(Thresholds) {
		t.Fatalf("docs/TRIAGE.md has %d threshold rows, the code %d", len(got), len(Thresholds))
	}
	for i := range got {
		if got[i] != Thresholds[i] {
			t.Errorf("row %d: docs %+v, code %+v", i, got[i], Thresholds[i])
		}
	}
	// Every rule has its row and every row a rule.
	for _, r := range rules {
		threshold(r.key)
	}
	for _, th := range Thresholds {
		n := 0
		for _, r := range rules {
			if r.key == th.Key {
				n++
			}
		}
		if n != 1 {
			t.Errorf("threshold %s: %d rules", th.Key, n)
		}
		if th.Warning >= th.Critical {
			t.Errorf("threshold %s: warning %v not below critical %v", th.Key, th.Warning, th.Critical)
		}
	}
}

// TestFindingsRanked: figures past their thresholds become findings,
// most severe first and, within a severity, furthest past the threshold
// first; areas with data and nothing past a threshold get one info line;
// a calm set of facts has nothing above info.
func TestFindingsRanked(t *testing.T) {
	f := &Facts{WindowSec: 60, Target: "--pid 4242"}
	f.GC = GCFacts{Seen: true, Count: 40, PausePct: 6, Induced: 30, MaxPauseMs: 12}
	f.Locks = LockFacts{Seen: true, WaitPct: 50, Contentions: 900, WaitMs: 30000, Threads: 10}
	f.Exceptions = ExceptionFacts{Source: "counters", Seen: true, PerSec: 3}
	f.CPU = CPUFacts{Source: "schedstat", Seen: true, Cores: 4, Pct: 10, UsagePct: -1}
	fs := Findings(f)
	var got []string
	for _, x := range fs {
		got = append(got, x.Severity.String()+" "+string(x.Area)+" "+x.Rule)
	}
	// locks 50/25 = 2.0 ahead of induced 30/min / 20 = 1.5; pause 6/5.
	want := []string{"critical locks locks.wait_pct", "critical gc gc.induced_per_min", "warning gc gc.pause_pct",
		"info exceptions ", "info cpu "}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("findings\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if fs[0].Title != "threads wait on locks 50% of their time (900 waits, 30000 ms)" || fs[0].Next != "clrspy locks --pid 4242 --duration 30s" {
		t.Errorf("first finding %q next %q", fs[0].Title, fs[0].Next)
	}
	if fs[1].Title != "30 induced GCs (30/min): something calls GC.Collect" || fs[1].Evidence["induced"] != 30 {
		t.Errorf("induced finding %q %v", fs[1].Title, fs[1].Evidence)
	}
	calm := &Facts{WindowSec: 30, Target: "app.nettrace", GC: GCFacts{Seen: true, Count: 3, PausePct: 0.1, MaxPauseMs: 2}}
	cf := Findings(calm)
	if Worst(cf) != Info || len(cf) != 1 || cf[0].Title != "GC calm: 3 GCs, 0.1% paused (the runtime's count), longest stop 2 ms (suspension to restart)" || cf[0].Next != "clrspy gc app.nettrace" {
		t.Fatalf("calm: %+v", cf)
	}
	// One blocking gen2 GC in a short window is not a rate; two are.
	one := &Facts{WindowSec: 6, GC: GCFacts{Seen: true, Count: 20, Gen2Blocking: 1}}
	if w := Worst(Findings(one)); w != Info {
		t.Errorf("one blocking gen2 GC in 6 s judged %s", w)
	}
	one.GC.Gen2Blocking = 2
	if fs := Findings(one); fs[0].Severity != Warning || fs[0].Title != "2 blocking gen2 GCs (20/min)" {
		t.Errorf("two blocking gen2 GCs in 6 s: %+v", fs[0])
	}
	// A leak: growth judged only past the guards.
	leak := &Facts{WindowSec: 30, Target: "--pid 1", Memory: MemoryFacts{Seen: true, GCs: 5, FirstOldMB: 10, LastOldMB: 90, SpanSec: 20, OldGrowthMBMin: 240}}
	lf := Findings(leak)
	if lf[0].Severity != Critical || lf[0].Rule != "memory.old_growth_mb_per_min" || !strings.HasPrefix(lf[0].Next, "clrspy snapshot --pid 1 -o a.gcdump") {
		t.Fatalf("leak: %+v", lf[0])
	}
	leak.Memory.LastOldMB = 20 // 10 MB: below MinOldGrowthMB
	if Worst(Findings(leak)) != Info {
		t.Errorf("10 MB of growth judged: %+v", Findings(leak)[0])
	}
}

func runFile(t *testing.T, name string) *Facts {
	t.Helper()
	r := tracetest.Open(t, name, nettrace.NewReader)
	a := New(r.Header(), Options{Target: name})
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		a.Event(ev)
	}
	if s := a.Stats(); s.DecodeErrors != 0 {
		t.Fatalf("%d decode errors: %v", s.DecodeErrors, s.FirstError)
	}
	return a.Facts()
}

// TestInducedFixture: the induced fixture (3 GC.Collect calls per
// generation) judged: the GC facts are the runtime's own figures and the
// top finding is a critical induced-GC one.
func TestInducedFixture(t *testing.T) {
	w := tracetest.Workload(t, "gc-induced.nettrace")
	f := runFile(t, "gc-induced.nettrace")
	induced := w.Int("induced0") + w.Int("induced1") + w.Int("induced2")
	if int64(f.GC.Induced) != induced || f.GC.Count != 9 {
		t.Errorf("induced %d of %d GCs; the workload called GC.Collect %d times", f.GC.Induced, f.GC.Count, induced)
	}
	// The runtime's pause total (GC.GetTotalPauseDuration) within 0.05 ms.
	if math.Abs(f.GC.PausedMs-w.PauseMs) > 0.05 {
		t.Errorf("paused %.3f ms, the runtime says %.3f ms", f.GC.PausedMs, w.PauseMs)
	}
	fs := Findings(f)
	if fs[0].Area != AreaGC || fs[0].Severity != Critical || fs[0].Rule != "gc.induced_per_min" {
		t.Errorf("top finding %+v", fs[0])
	}
}

// TestContentionFixture: four threads, one Monitor: the lock facts are
// the workload's measured waits, the top lock's stack is the workload's.
func TestContentionFixture(t *testing.T) {
	w := tracetest.Workload(t, "contention.nettrace")
	var contended []int64
	if err := w.Get("contended", &contended); err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, c := range contended {
		n += c
	}
	f := runFile(t, "contention.nettrace")
	if f.Locks.Contentions != n || math.Abs(f.Locks.WaitMs-w.Float("totalWaitMs")) > 0.1*w.Float("totalWaitMs") {
		t.Errorf("%d waits %.1f ms; the workload: %d waits %.1f ms", f.Locks.Contentions, f.Locks.WaitMs, n, w.Float("totalWaitMs"))
	}
	if len(f.Locks.TopStack) < 2 || !strings.Contains(f.Locks.TopStack[1], "Workload.Contention") {
		t.Errorf("top stack %q", f.Locks.TopStack)
	}
	fs := Findings(f)
	if fs[0].Area != AreaLocks || fs[0].Severity == Info {
		t.Errorf("top finding %+v", fs[0])
	}
}

// TestCPUFixture: the cpu fixture (runtime samples, no counters): the top
// methods are HotA and HotB in the ratio the workload measured (within
// 10%: samples every ~1 ms over one second), and the CPU area says it has
// no usage figure rather than calling the process calm.
func TestCPUFixture(t *testing.T) {
	w := tracetest.Workload(t, "cpu.nettrace")
	f := runFile(t, "cpu.nettrace")
	c := f.CPU
	if c.Source != "samples" || len(c.TopMethods) < 2 || c.TopMethods[0].Name != "Workload.Cpu.HotA" || c.TopMethods[1].Name != "Workload.Cpu.HotB" {
		t.Fatalf("cpu facts %+v", c)
	}
	got := c.TopMethods[0].Pct / (c.TopMethods[0].Pct + c.TopMethods[1].Pct)
	want := w.Float("hotAMs") / (w.Float("hotAMs") + w.Float("hotBMs"))
	if math.Abs(got-want) > 0.1*want {
		t.Errorf("HotA's share of HotA+HotB: %.3f, the workload measured %.3f", got, want)
	}
	for _, x := range Findings(f) {
		if x.Area == AreaCPU && (x.Severity != Info || !strings.HasPrefix(x.Title, "CPU: no usage figure in this stream; top method Workload.Cpu.HotA ")) {
			t.Errorf("cpu finding %+v", x)
		}
	}
}

// fakePool stands for a thread-pool analysis plugged in as a Contributor:
// it counts the events it was handed and replaces the counters' facts.
type fakePool struct{ events int }

func (p *fakePool) Event(*nettrace.Event) { p.events++ }
func (p *fakePool) Stats() analysis.Stats { return analysis.Stats{Events: uint64(p.events)} }
func (p *fakePool) Contribute(f *Facts) {
	f.ThreadPool = ThreadPoolFacts{Source: "threadpool", Seen: true, QueueMax: 500, Starvations: 3, TopBlockingSite: "App.Handler.Get"}
}

// TestContributor: a contributor sees every event of the stream and its
// facts replace the counters' ones, which the same rule then judges.
func TestContributor(t *testing.T) {
	r := tracetest.Open(t, "contention.nettrace", nettrace.NewReader)
	p := &fakePool{}
	a := New(r.Header(), Options{Target: "x", Contributors: []Contributor{p}})
	n := 0
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		a.Event(ev)
		n++
	}
	f := a.Facts()
	if p.events != n || f.ThreadPool.Source != "threadpool" {
		t.Fatalf("contributor saw %d of %d events; facts %+v", p.events, n, f.ThreadPool)
	}
	fs := Findings(f)
	if fs[0].Area != AreaThreadPool || fs[0].Severity != Critical || fs[0].Evidence["top_blocking_site"] != "App.Handler.Get" || fs[0].Evidence["source"] != "threadpool" {
		t.Errorf("top finding %+v", fs[0])
	}
}

// TestContributorsOnFixtures: the thread-pool and exception analyses
// refine the counters' facts where the stream has their events. The
// threadpool fixture (the starve workload: 32 items blocked in
// Starve.Block's Task.Wait, one episode) gets its episode and blocking
// site; the exceptions fixture (160 throws of 4 types, InvalidOperation-
// Exception the most thrown, from ExcOrders.Lookup) its top type and throw
// site, counted exactly.
func TestContributorsOnFixtures(t *testing.T) {
	open := func(name string) *nettrace.Reader {
		return tracetest.OpenFile(t, tracetest.Path(t, name), func(in io.Reader) (*nettrace.Reader, error) {
			z, err := gzip.NewReader(in)
			if err != nil {
				return nil, err
			}
			return nettrace.NewReader(z)
		})
	}
	run := func(name string) *Facts {
		r := open(name)
		sym := stacks.NewSymbols(r.Header())
		a := New(r.Header(), Options{Target: name, Symbols: sym,
			Contributors: []Contributor{ThreadPool(r.Header(), sym), Exceptions(r.Header(), sym)}})
		if err := tracetest.ReadAll(t, r, func(ev *nettrace.Event) { sym.Event(ev); a.Event(ev) }); err != nil {
			t.Fatal(err)
		}
		return a.Facts()
	}
	tp := run("threadpool.nettrace.gz").ThreadPool
	t.Logf("thread pool: %+v", tp)
	if tp.Source != "threadpool" || tp.Starvations != 1 || tp.ThreadsMax != 13 ||
		!strings.HasPrefix(tp.TopBlockingSite, "Workload.Starve.Block → System.Threading.Tasks.Task") {
		t.Errorf("thread-pool facts %+v: want the fixture's one episode, 13 threads, Starve.Block blocking in Task.Wait", tp)
	}
	x := run("exceptions.nettrace.gz").Exceptions
	t.Logf("exceptions: %+v", x)
	if x.Source != "exceptions" || x.Count != 160 || x.TopType != "System.InvalidOperationException" || x.TopSite == "" {
		t.Errorf("exception facts %+v", x)
	}
}

func runGz(t *testing.T, name string) *Facts {
	t.Helper()
	r := tracetest.OpenFile(t, tracetest.Path(t, name), func(in io.Reader) (*nettrace.Reader, error) {
		z, err := gzip.NewReader(in)
		if err != nil {
			return nil, err
		}
		return nettrace.NewReader(z)
	})
	a := New(r.Header(), Options{Target: name})
	if err := tracetest.ReadAll(t, r, a.Event); err != nil {
		t.Fatal(err)
	}
	return a.Facts()
}

// TestWarmupNotLeak: GC-heavy fixtures whose old generations grow from
// almost nothing at start-up are not leak suspects: the heap-churn
// workload's gen2+LOH goes 1.6 → 26.5 MB in 2 s, 10.9 MB of it in the
// first third (the warm-up) and 14 MB after, under the 16 MB a leak needs;
// gc-wks's 7.7 → 29.3 MB in 0.27 s likewise (15.2 MB after its warm-up).
// Both say so, neither "steady".
func TestWarmupNotLeak(t *testing.T) {
	for _, c := range []struct {
		name            string
		f               *Facts
		gcs, settledGCs int
		warmup, sinceMB float64
		title           string
	}{
		{"heap-churn", runGz(t, "heap-churn.nettrace.gz"), 55, 35, 10.87, 13.95,
			"memory: gen2+LOH 2 → 26 MB after GCs, 14 MB of it in 1.3 s after the warm-up (631 MB/min): too little to call a leak (from 16 MB)"},
		{"gc-wks", runFile(t, "gc-wks.nettrace"), 40, 25, 6.30, 15.23,
			"memory: gen2+LOH 8 → 29 MB after GCs, 15 MB of it in 0.2 s after the warm-up (5520 MB/min): too little to call a leak (from 16 MB)"},
	} {
		m := c.f.Memory
		if m.GCs != c.gcs || m.SettledGCs != c.settledGCs || !m.Settled || math.Abs(m.WarmupMB-c.warmup) > 0.01 || math.Abs(m.LastOldMB-m.SettledOldMB-c.sinceMB) > 0.01 {
			t.Errorf("%s: memory facts %+v", c.name, m)
		}
		for _, x := range Findings(c.f) {
			if x.Area != AreaMemory {
				continue
			}
			if x.Severity != Info || x.Title != c.title {
				t.Errorf("%s: memory finding %s %q, want info %q", c.name, x.Severity, x.Title, c.title)
			}
		}
	}
	// The same growth from the start, with no series (a caller that
	// keeps only the ends), is still judged first to last.
	ends := &Facts{WindowSec: 3, Memory: MemoryFacts{Seen: true, GCs: 55, FirstOldMB: 1.6, LastOldMB: 26.5, SpanSec: 2, OldGrowthMBMin: 747}}
	if fs := Findings(ends); fs[0].Rule != "memory.old_growth_mb_per_min" || fs[0].Severity != Critical {
		t.Errorf("growth without a series: %+v", fs[0])
	}
	// One GC is no trend: never "steady".
	one := &Facts{WindowSec: 3, Memory: MemoryFacts{Seen: true, GCs: 1, FirstOldMB: 4, LastOldMB: 4}}
	if fs := Findings(one); fs[0].Title != "memory: gen2+LOH 4 → 4 MB after GCs, 1 GC with heap statistics: too few to judge a trend" {
		t.Errorf("one GC: %q", fs[0].Title)
	}
	slow := &Facts{WindowSec: 600, Memory: MemoryFacts{Seen: true, GCs: 50, FirstOldMB: 100, LastOldMB: 260, SpanSec: 600,
		Settled: true, SettledGCs: 34, SettledOldMB: 150, SettledSec: 400, OldGrowthMBMin: 16.5, WarmupMB: 50}}
	if fs := Findings(slow); fs[0].Title != "memory grows slowly, 16 MB/min: gen2+LOH 100 → 260 MB after GCs (a leak suspect from 30 MB/min)" {
		t.Errorf("16 MB/min: %q", fs[0].Title)
	}
}

// TestOtherSuspensions: the composite fixture (recorded with the runtime's
// sample profiler on) was stopped 561 times for reasons other than GC,
// 547.5 ms of its 2.35 s window (23.3%, on top of the GCs' 766 ms): judged
// critical, with the reason and the profiler named as its cost, and ranked
// after the GC's 30.5% paused (impact first).
func TestOtherSuspensions(t *testing.T) {
	f := runFile(t, "composite.nettrace")
	g := f.GC
	if g.OtherSuspensions != 561 || math.Abs(g.OtherStoppedMs-547.51) > 0.01 || math.Abs(g.OtherMaxMs-35.37) > 0.01 ||
		g.OtherTopReason != "SuspendOther" || !g.ProfilerInStream || math.Abs(g.StoppedMs-1313.75) > 0.01 || math.Abs(g.OtherPct-23.26) > 0.01 {
		t.Fatalf("gc facts %+v", g)
	}
	fs := Findings(f)
	var other *Finding
	for i := range fs {
		if fs[i].Rule == "gc.other_suspension_pct" {
			other = &fs[i]
		}
		if i > 0 && fs[i].Severity == fs[i-1].Severity && fs[i].ImpactPct > fs[i-1].ImpactPct {
			t.Errorf("finding %d (%s, impact %.2f) ranked below one of less impact (%.2f)", i, fs[i].Rule, fs[i].ImpactPct, fs[i-1].ImpactPct)
		}
	}
	want := "the runtime stopped the process 561 times for other reasons than GC: 548 ms, 23.3% of the time (longest 35.4 ms; 1× the GCs' stopped time); mostly SuspendOther, which counts the sample profiler's own suspensions: a cost of the measurement"
	if other == nil || other.Severity != Critical || other.Title != want || other.ImpactPct != 23.26 {
		t.Fatalf("other suspensions finding %+v", other)
	}
	if fs[0].Rule == "gc.other_suspension_pct" || fs[0].ImpactPct != 30.53 {
		t.Errorf("first finding %s (impact %.2f), want a GC one at 30.53%%", fs[0].Rule, fs[0].ImpactPct)
	}
}

// TestRankedByImpact: of two critical findings, the one that costs the
// application its time (52% paused) ranks above a memory trend far past
// its threshold that costs none yet; a saturated thread is judged and
// named even when the process asks for half the machine.
func TestRankedByImpact(t *testing.T) {
	f := &Facts{WindowSec: 10, Target: "--pid 7"}
	f.GC = GCFacts{Seen: true, Count: 555, PausePct: 52, PausedMs: 5200, MaxPauseMs: 30}
	f.Memory = MemoryFacts{Seen: true, GCs: 555, FirstOldMB: 0, LastOldMB: 200, SpanSec: 10, OldGrowthMBMin: 1200}
	f.CPU = CPUFacts{Source: "schedstat", Seen: true, Cores: 2, Pct: 53, UsagePct: -1, BusiestThreadPct: 99.5, BusiestThreadID: 4242,
		BusiestThreadName: "spinner", TopMethods: []Method{{"Workload.Cpu.HotA", 74}, {"Workload.Cpu.HotB", 25}}}
	var got []string
	for _, x := range Findings(f) {
		got = append(got, x.Severity.String()+" "+x.Rule)
	}
	want := []string{"critical gc.pause_pct", "critical memory.old_growth_mb_per_min", "critical cpu.thread_pct", "warning cpu.demand_pct"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("findings\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	fs := Findings(f)
	if fs[2].Title != "one thread saturates a core: thread 4242 (spinner) wants 100% of a core; top: Workload.Cpu.HotA 74%, Workload.Cpu.HotB 25%" ||
		fs[2].Evidence["busiest_thread_id"] != uint64(4242) || fs[2].Next != "clrspy profile --pid 7 --duration 30s" {
		t.Errorf("thread finding %q %v %q", fs[2].Title, fs[2].Evidence, fs[2].Next)
	}
}

// TestSnapshotGCNotApplications: the heap-graph fixture is a heap
// snapshot (one induced blocking gen2 GC, GC 1, whose walk the GCBulkNode
// events are): triage marks that GC itself and keeps it out of the
// application's induced GCs, blocking gen2 GCs and pause share, so the
// trace is calm rather than "1 induced GC: something calls GC.Collect".
func TestSnapshotGCNotApplications(t *testing.T) {
	f := runGz(t, "heap-graph.nettrace.gz")
	g := f.GC
	if g.Count != 1 || g.SnapshotGC != 1 || g.Induced != 0 || g.Gen2Blocking != 0 || g.PausedMs != 0 || g.PausePct != 0 ||
		math.Abs(g.SnapshotPauseMs-1.2528) > 0.001 || g.StoppedMs != 0 {
		t.Fatalf("gc facts %+v", g)
	}
	fs := Findings(f)
	if Worst(fs) != Info {
		t.Errorf("worst %s: %+v", Worst(fs), fs[0])
	}
	for _, x := range fs {
		if x.Area == AreaGC && x.Title != "GC calm: 1 GC, 0.0% paused (the runtime's count), longest stop 1 ms (suspension to restart); GC 1 is the heap snapshot's own (1.3 ms), not counted" {
			t.Errorf("gc finding %q", x.Title)
		}
	}
}

// TestBlockedFindings: a cycle of lock waits is a critical finding naming
// its threads; threads blocked on one lock are judged by the table (5 a
// warning, 20 critical), with the lock and its owner; an attached
// target's next step is clrspy stacks.
func TestBlockedFindings(t *testing.T) {
	f := &Facts{Target: "--pid 42", Locks: LockFacts{Seen: true, Deadlocks: [][]uint64{{11, 12}}, MostBlocked: 6,
		BlockedLock: "W.Gate", BlockedOwnerTid: 13}}
	got := map[string]Finding{}
	for _, x := range Findings(f) {
		got[x.Rule] = x
	}
	d, b := got["locks.deadlocked_threads"], got["locks.blocked_on_one_lock"]
	if d.Severity != Critical || d.Title != "deadlock: threads 11 → 12 → 11 (each waits for a lock the next holds, 1 s or longer)" || d.Next != "clrspy stacks --pid 42" {
		t.Errorf("deadlock finding %+v", d)
	}
	if b.Severity != Warning || b.Title != "6 threads blocked 1 s or longer on one lock (W.Gate), held by thread 13" {
		t.Errorf("blocked finding %+v", b)
	}
	f.Locks.MostBlocked = 20
	f.Locks.Deadlocks = nil
	for _, x := range Findings(f) {
		if x.Rule == "locks.deadlocked_threads" {
			t.Errorf("a deadlock finding without a cycle: %+v", x)
		}
		if x.Rule == "locks.blocked_on_one_lock" && x.Severity != Critical {
			t.Errorf("20 blocked threads: %v, want critical", x.Severity)
		}
	}
}

// TestRequestsFinding: on the requests fixture (the ASP.NET workload
// under wrk: 406 requests, 20 hit by a GC pause, 109.770 ms of their
// 2.579 s paused, requests/TestFixture's figures) GC pauses hit 4.9 % of
// the requests, past gc.requests_hit_pct's warning (1 %: they are in
// the p99) and under its critical (10 %); 4.26 % of request time is
// under gc.request_paused_pct's 5 %: one finding, a warning, naming
// the route hit most. A fixture without request events has no request
// facts and no such finding.
func TestRequestsFinding(t *testing.T) {
	run := func(name string) *Facts {
		r := tracetest.OpenFile(t, tracetest.Path(t, name), func(in io.Reader) (*nettrace.Reader, error) {
			z, err := gzip.NewReader(in)
			if err != nil {
				return nil, err
			}
			return nettrace.NewReader(z)
		})
		a := New(r.Header(), Options{Target: name, Refine: true})
		if err := tracetest.ReadAll(t, r, a.Event); err != nil {
			t.Fatal(err)
		}
		return a.Facts()
	}
	f := run("requests.nettrace.gz")
	q := f.Requests
	if q == nil {
		t.Fatal("no request facts")
	}
	if q.Requests != 406 || q.HitByGC != 20 || q.PausedMs < 109.76 || q.PausedMs > 109.78 ||
		q.HitPct < 4.92 || q.HitPct > 4.93 || q.PausedPct < 4.25 || q.PausedPct > 4.27 {
		t.Errorf("request facts %+v", q)
	}
	// The route with the largest share hit (of those with 100 requests):
	// GET /call/{n}, 10 of 102.
	if q.WorstRoute != "GET /call/{n}" || q.WorstRouteCount != 102 || q.WorstRouteHit != 10 || q.WorstRouteP99HitMs <= q.WorstRouteP99NotHitMs {
		t.Errorf("worst route %+v", q)
	}
	var got []Finding
	for _, x := range Findings(f) {
		if x.Rule == "gc.requests_hit_pct" || x.Rule == "gc.request_paused_pct" {
			got = append(got, x)
		}
	}
	if len(got) != 1 || got[0].Rule != "gc.requests_hit_pct" || got[0].Severity != Warning || got[0].Area != AreaGC ||
		!strings.HasPrefix(got[0].Title, "GC pauses hit 4.9% of requests (20 of 406") || !strings.Contains(got[0].Title, "most on GET /call/{n}: 10 of 102") ||
		got[0].Next != "clrspy requests requests.nettrace.gz" || got[0].ImpactPct != 4.26 || got[0].Evidence["requests_hit_by_gc"] != int64(20) {
		t.Errorf("request findings %+v", got)
	}
	if g := run("threadpool.nettrace.gz"); g.Requests != nil {
		t.Errorf("threadpool fixture: request facts %+v", g.Requests)
	}
}
