package serve

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clrspy/clrspy/internal/workload"
)

const mb = 1 << 20

// feed gives j one gen2 GC a minute from t0 with the sizes (MiB) and
// returns the minutes at which it asked for the first and the second
// snapshots.
func feed(j *leakJudge, t0 time.Time, from int, sizes []float64) (firsts, seconds []int) {
	for i, s := range sizes {
		switch j.gc(t0.Add(time.Duration(from+i)*time.Minute), uint64(s*mb), true) {
		case leakFirst:
			firsts = append(firsts, from+i)
		case leakSecond:
			seconds = append(seconds, from+i)
		}
	}
	return firsts, seconds
}

func ramp(from, step float64, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = from + step*float64(i)
	}
	return s
}

// TestLeakJudgeStartup: a heap that grows from 10 to 200 MiB over its
// first 5 minutes (start-up: caches filled) and is flat after is never
// judged: the start-up is not judged at all, the flat heap after has no
// growth.
func TestLeakJudgeStartup(t *testing.T) {
	j := &leakJudge{}
	t0 := time.Unix(1e9, 0)
	sizes := append(ramp(10, 38, 5), ramp(200, 0, 60)...)
	f, s := feed(j, t0, 0, sizes)
	if len(f) != 0 || len(s) != 0 {
		t.Errorf("start-up growth judged: first at %v, second at %v", f, s)
	}
	// Growth over the start-up only, up to the settle time: the run begins at minute 5.
	if j.runFrom != 200*mb || !j.runStart.Equal(t0.Add(5*time.Minute)) {
		t.Errorf("run from %d at %v, want 200 MiB at minute 5", j.runFrom, j.runStart.Sub(t0))
	}
}

// TestLeakJudgeFlat: a flat heap with noise (±3 %) and younger GCs in
// between, for a day, never triggers.
func TestLeakJudgeFlat(t *testing.T) {
	j := &leakJudge{}
	t0 := time.Unix(1e9, 0)
	for i := range 24 * 60 {
		at := t0.Add(time.Duration(i) * time.Minute)
		noise := []float64{1, 1.03, 0.97, 1.01, 0.99}[i%5]
		if a := j.gc(at, uint64(100*mb*noise), true); a != leakNone {
			t.Fatalf("minute %d: %v on a flat heap", i, a)
		}
		// A gen1 GC promoting into gen2 (100 -> 150 MiB) is not judged.
		if a := j.gc(at.Add(30*time.Second), 150*mb, false); a != leakNone {
			t.Fatalf("minute %d: %v after a gen1 GC", i, a)
		}
	}
}

// TestLeakJudgeSustained: after the start-up, gen2 grows 2 MiB a
// minute from 100 MiB. The first snapshot is asked for once the run
// spans 5 minutes and grew 10 % (minute 10, 110 MiB: the run starts at
// minute 5, the settle time); the second after a further 10 % (121
// MiB, minute 16); then nothing before 6 h after the first: the rate
// limit; then the next pair (first at minute 370, 830 MiB; second at
// 913 MiB, minute 412).
func TestLeakJudgeSustained(t *testing.T) {
	j := &leakJudge{}
	t0 := time.Unix(1e9, 0)
	sizes := append(ramp(50, 10, 5), ramp(100, 2, 7*60)...)
	f, s := feed(j, t0, 0, sizes)
	if len(f) < 1 || f[0] != 10 || len(s) < 1 || s[0] != 16 {
		t.Fatalf("first at %v, second at %v; want 10 and 16", f, s)
	}
	if len(f) != 2 || f[1] != 370 || len(s) != 2 || s[1] != 412 {
		t.Errorf("first at %v, second at %v: want the next pair at minutes 370 and 412", f, s)
	}
	// A slower limit of 1 h: a pair an hour.
	j = &leakJudge{cfg: LeakWatch{Every: time.Hour}}
	f, _ = feed(j, t0, 0, sizes)
	if len(f) != 7 || f[1] != 70 || f[6] != 370 {
		t.Errorf("with Every 1h, firsts at %v: want every 60 min from minute 10", f)
	}
}

// TestLeakJudgeSkipped: a snapshot asked for but not taken (another
// through /debug/pprof/heap) is asked for again at the next gen2 GC,
// the first without the rate limit counting it.
func TestLeakJudgeSkipped(t *testing.T) {
	j := &leakJudge{}
	t0 := time.Unix(1e9, 0)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	feed(j, t0, 0, append(ramp(50, 10, 5), ramp(100, 2, 5)...)) // minutes 0..9: 108 MiB at 9
	if a := j.gc(at(10), 110*mb, true); a != leakFirst {
		t.Fatalf("minute 10: %v, want the first", a)
	}
	j.skipped(leakFirst)
	if a := j.gc(at(11), 112*mb, true); a != leakFirst {
		t.Fatalf("minute 11 after a skipped first: %v, want the first again", a)
	}
	if a := j.gc(at(17), 124*mb, true); a != leakSecond {
		t.Fatalf("minute 17: %v, want the second", a)
	}
	j.skipped(leakSecond)
	if a := j.gc(at(18), 126*mb, true); a != leakSecond {
		t.Fatalf("minute 18 after a skipped second: %v, want the second again", a)
	}
	if a := j.gc(at(19), 128*mb, true); a != leakNone {
		t.Errorf("minute 19: %v, want nothing (the rate limit)", a)
	}
}

// TestLeakJudgeAbandoned: growth of 10 % over 5 minutes, then the heap
// gives back (a cache trimmed, -20 %): the first snapshot was taken,
// the second is not, and the rate limit holds the next first back.
func TestLeakJudgeAbandoned(t *testing.T) {
	j := &leakJudge{}
	t0 := time.Unix(1e9, 0)
	sizes := append(ramp(100, 0, 5), ramp(100, 2, 6)...) // minutes 5..10: 100 -> 110
	sizes = append(sizes, 88, 88)                        // minutes 11, 12: under the run's highest by 20 %
	sizes = append(sizes, ramp(88, 3, 60)...)            // grows again at once
	f, s := feed(j, t0, 0, sizes)
	if len(f) != 1 || f[0] != 10 || len(s) != 0 {
		t.Errorf("first at %v, second at %v: want one first at 10, no second", f, s)
	}
	if j.armed {
		t.Error("still waiting for the second after the heap gave back")
	}
}

// TestLeakJudgeSmall: 10 % of a 2 MiB heap is not a leak (under
// leakMinBytes), nor is a single jump (fewer than leakMinGCs GCs over
// the window).
func TestLeakJudgeSmall(t *testing.T) {
	t0 := time.Unix(1e9, 0)
	j := &leakJudge{}
	f, _ := feed(j, t0, 0, append(ramp(2, 0, 5), ramp(2, 0.1, 60)...))
	if len(f) != 1 || f[0] != 5+10 {
		// 2 MiB + 1 MiB (leakMinBytes) is reached at minute 15.
		t.Errorf("small heap: first at %v, want 15 (1 MiB of growth)", f)
	}
	j = &leakJudge{}
	at := t0.Add(6 * time.Minute)
	j.gc(t0, 100*mb, true)
	j.gc(at, 100*mb, true)
	if a := j.gc(at.Add(10*time.Minute), 200*mb, true); a != leakNone {
		t.Errorf("one jump over 10 minutes (2 GCs): %v", a)
	}
}

// TestLeakWatchConfig: the zero value is on with the defaults; bad
// values are refused in one line naming the flag.
func TestLeakWatchConfig(t *testing.T) {
	var l LeakWatch
	if l.settle() != 5*time.Minute || l.window() != 5*time.Minute || l.every() != 6*time.Hour || l.growth() != 10 {
		t.Errorf("defaults %v %v %v %v", l.settle(), l.window(), l.every(), l.growth())
	}
	for _, c := range []struct {
		l    LeakWatch
		want string
	}{
		{LeakWatch{Window: -1}, "--leak-watch-window "},
		{LeakWatch{Every: -time.Minute}, "--leak-watch-every "},
		{LeakWatch{Growth: -1}, "--leak-watch-growth "},
	} {
		err := (&Config{LeakWatch: c.l}).check()
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: %v", c.l, err)
		}
	}
	if err := (&Config{LeakWatch: LeakWatch{Off: true, Window: -1}}).check(); err != nil {
		t.Errorf("off: %v", err)
	}
}

// TestLeakWatchLive: the default leak watch on the graph workload, its
// times shortened (settle and window 1 s): its GCs before the settle
// time and a flat gen2 after take no snapshot; 30,000 items added
// (about 2 MB against a gen2 of a few hundred KB) and two more GCs (the
// second moves them to gen2), so the run has 3 gen2 GCs over more than
// the window and gen2 grew 10 % and 1 MiB: the first snapshot, once;
// gen2 flat after it: no second (it waits for as much growth again), so
// no growth is exported.
func TestLeakWatchLive(t *testing.T) {
	old := leakSecondAfter
	leakSecondAfter = 0
	t.Cleanup(func() { leakSecondAfter = old })
	gs := startGraphServe(t, Config{LeakWatch: LeakWatch{Settle: time.Second, Window: time.Second}})
	log, h, p, pid := gs.log, gs.h, gs.p, gs.pid
	taken := "gen2 grew steadily: the leak watch takes a heap snapshot (a blocking gen2 GC), another after further growth pid=" + pid
	gcs := gs.gcs
	// Start-up: GCs within the settle time; then a flat gen2 for 2 s.
	gcs(2)
	time.Sleep(time.Second)
	gcs(5)
	if strings.Contains(log.String(), "leak watch takes a heap snapshot") {
		t.Fatalf("a snapshot on a flat heap:\n%s", log)
	}
	p.Stdin("add 30000\n")
	waitStderr(t, p, "added 30000")
	gcs(2)
	waitFor(t, 20*time.Second, "the first snapshot", func() bool {
		return strings.Contains(log.String(), "heap snapshot taken as the baseline of gen2 growth pid="+pid)
	})
	var line string
	for _, l := range strings.Split(log.String(), "\n") {
		if strings.Contains(l, taken) {
			line = l
		}
	}
	t.Logf("%s", line)
	var from, to uint64
	for _, f := range strings.Fields(line) {
		if v, ok := strings.CutPrefix(f, "gen2_from_bytes="); ok {
			from, _ = strconv.ParseUint(v, 10, 64)
		}
		if v, ok := strings.CutPrefix(f, "gen2_bytes="); ok {
			to, _ = strconv.ParseUint(v, 10, 64)
		}
	}
	// The growth judged is the items' (2,160,024 bytes; 1,934,072 in a
	// run: the start-up's own garbage left gen2 meanwhile): more than
	// leakMinBytes and 10 %, not more than the items.
	if from == 0 || to < from+leakMinBytes || float64(to) < 1.1*float64(from) || to > from+2_160_024 {
		t.Errorf("the warning's gen2 %d -> %d: want 1 MiB to 2,160,024 B more:\n%s", from, to, log)
	}
	gcs(4)
	p.Stdin("exit\n")
	if _, err := p.Wait(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(log.String(), "leak watch takes a heap snapshot"); n != 1 {
		t.Errorf("%d snapshots begun, want 1:\n%s", n, log)
	}
	if strings.Contains(log.String(), "gen2 grew since the last heap snapshot") {
		t.Errorf("a second snapshot without further growth:\n%s", log)
	}
	if m := get(t, h, "/metrics").Body.String(); strings.Contains(m, `clrspy_heap_growth_bytes{pid="`+pid+`"`) {
		t.Errorf("growth exported without a second snapshot")
	}
}

// TestLeakWatchLiveDiff: the leak watch's second snapshot and its diff on
// a real leak. The graph workload's leak command keeps 30,000 more
// GraphItem+GraphLeaf each time (2,160,024 bytes: 32 B each and the
// 240,024 B array): the first leak and two GCs make the baseline (as in
// TestLeakWatchLive), a second and two GCs make gen2 grow again by as
// much, so once snapshotMinInterval (shortened to 0) allows, the watch
// takes the second snapshot and its diff names the leaking types with
// exactly what was leaked since the first: GraphItem and GraphLeaf
// +960,000 B (+30,000 objects) each and the array's 240,024 B, in the log and in
// clrspy_heap_growth_bytes (the objects are kept: nothing of them can
// leave, so no tolerance is needed beyond the GCs' timing, which the
// waits absorb).
func TestLeakWatchLiveDiff(t *testing.T) {
	oldAfter, oldMin := leakSecondAfter, snapshotMinInterval
	leakSecondAfter, snapshotMinInterval = 0, 0
	t.Cleanup(func() { leakSecondAfter, snapshotMinInterval = oldAfter, oldMin })
	gs := startGraphServe(t, Config{LeakWatch: LeakWatch{Settle: time.Second, Window: time.Second}})
	log, h, p, pid, name := gs.log, gs.h, gs.p, gs.pid, gs.name
	gcs := gs.gcs
	gcs(2)
	time.Sleep(time.Second)
	gcs(3)
	p.Stdin("leak 30000\n")
	waitStderr(t, p, "leaked 30000")
	gcs(2)
	waitFor(t, 30*time.Second, "the first snapshot", func() bool {
		return strings.Contains(log.String(), "heap snapshot taken as the baseline of gen2 growth pid="+pid)
	})
	// The baseline's own GC sets the reference; then the second leak.
	gcs(1)
	p.Stdin("leak 30000\n")
	waitStderr(t, p, "leaked 30000 2160024")
	diffed := "gen2 grew since the last heap snapshot; the types that grew most pid=" + pid
	waitFor(t, 60*time.Second, "the second snapshot's diff", func() bool {
		if !strings.Contains(log.String(), diffed) {
			gcs(1)
			return false
		}
		return true
	})
	var line string
	for _, l := range strings.Split(log.String(), "\n") {
		if strings.Contains(l, diffed) {
			line = l
		}
	}
	t.Logf("%s", line)
	for _, want := range []string{"Workload.GraphItem +960000 B (+30000 objects)", "Workload.GraphLeaf +960000 B (+30000 objects)",
		"Workload.GraphItem[] +240024 B (+1 objects)"} {
		if !strings.Contains(line, want) {
			t.Errorf("the diff lacks %q:\n%s", want, line)
		}
	}
	m := get(t, h, "/metrics").Body.String()
	for _, ty := range []string{"Workload.GraphItem", "Workload.GraphLeaf"} {
		want := `clrspy_heap_growth_bytes{pid="` + pid + `",process="` + name + `",type="` + ty + `"} 960000`
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	p.Stdin("exit\n")
	if _, err := p.Wait(30 * time.Second); err != nil {
		t.Fatal(err)
	}
}

// graphServe is a daemon with its handler, monitoring the graph workload
// (items=3000) under its own name, its session open.
type graphServe struct {
	d         *Daemon
	log       *workload.LockedBuffer
	h         http.Handler
	p         *workload.Proc
	pid, name string
}

// startGraphServe starts the daemon with cfg (its Names set to the
// workload's) and the workload, and waits for the session.
func startGraphServe(t *testing.T, cfg Config) *graphServe {
	t.Helper()
	path, name := alias(t, t.TempDir())
	cfg.Names = []string{name}
	d, log := run(t, cfg)
	h, err := d.Handler(HandlerOptions{HeapEvery: -1, ProfileEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	p := startAs(t, path, nil, "graph", "items=3000")
	pid := strconv.Itoa(p.Pid)
	waitStderr(t, p, "graph ready")
	waitFor(t, 20*time.Second, "session open", func() bool { ti, _ := info(d, pid); return ti.State == "running" })
	return &graphServe{d: d, log: log, h: h, p: p, pid: pid, name: name}
}

// gcs has the workload run n blocking gen2 GCs, 400 ms apart.
func (gs *graphServe) gcs(n int) {
	for range n {
		gs.p.Stdin("gc\n")
		time.Sleep(400 * time.Millisecond)
	}
}
