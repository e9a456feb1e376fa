package serve

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/clrspy/clrspy/gcpause"
)

// The default leak watch (Config.LeakWatch): gen2's size after the
// target's gen2 GCs, judged over minutes, and a pair of heap snapshots
// (each a blocking gen2 GC and a heap walk) only when it grew and kept
// growing, at most one pair per LeakWatch.Every.

// LeakWatch configures the default leak watch. Its zero value is the
// watch on with the defaults.
type LeakWatch struct {
	// Off turns it off.
	Off bool
	// Settle is how long after the first GC seen nothing is judged: a
	// process's start-up fills its caches and pools (0: 5 min).
	Settle time.Duration
	// Window is the least time gen2 must have grown over (0: 5 min).
	Window time.Duration
	// Growth is by how many percent (0: 10).
	Growth float64
	// Every is the least time between two pairs of snapshots of one
	// target (0: 6 h).
	Every time.Duration
}

// The defaults.
const (
	leakSettle = 5 * time.Minute
	leakWindow = 5 * time.Minute
	leakGrowth = 10.0
	leakEvery  = 6 * time.Hour
	// leakMinBytes: growth under a MiB is not judged a leak, whatever
	// its percentage (a small heap).
	leakMinBytes = 1 << 20
	// leakTolerance: a gen2 GC after which gen2 is more than 5 % under
	// the highest size of the run ends the growth (the heap gave back).
	leakTolerance = 0.05
	// leakMinGCs: a run is at least this many gen2 GCs (one jump is not
	// sustained growth).
	leakMinGCs = 3
)

// leakSecondAfter: the second snapshot no sooner than this after the
// first (a variable for the tests).
var leakSecondAfter = time.Minute

func (l LeakWatch) settle() time.Duration { return cmpOr(l.Settle, leakSettle) }
func (l LeakWatch) window() time.Duration { return cmpOr(l.Window, leakWindow) }
func (l LeakWatch) every() time.Duration  { return cmpOr(l.Every, leakEvery) }
func (l LeakWatch) growth() float64 {
	if l.Growth == 0 {
		return leakGrowth
	}
	return l.Growth
}

func cmpOr(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

func (l LeakWatch) check() error {
	switch {
	case l.Off:
		return nil
	case l.Window < 0:
		return fmt.Errorf("--leak-watch-window %v: must be positive", l.Window)
	case l.Every < 0:
		return fmt.Errorf("--leak-watch-every %v: must be positive", l.Every)
	case l.Settle < 0:
		return fmt.Errorf("leak watch settle %v: must be positive", l.Settle)
	case math.IsNaN(l.Growth) || math.IsInf(l.Growth, 0) || l.Growth < 0:
		return fmt.Errorf("--leak-watch-growth %v: a percentage, positive", l.Growth)
	}
	return nil
}

// leakAction is what the judgement asks for after a GC.
type leakAction uint8

const (
	leakNone   leakAction = iota
	leakFirst             // take the first snapshot of a pair (the baseline)
	leakSecond            // take the second, to diff with the first
)

// leakJudge judges one target's gen2 sizes. It keeps a run: gen2 GCs
// since the last one after which gen2 was more than leakTolerance under
// the run's highest size. Growth is sustained when the run spans Window,
// has leakMinGCs GCs and gen2 is Growth % (and leakMinBytes) above its
// first; then the first snapshot, unless one was taken less than Every
// ago. The second comes after a further Growth % (and leakMinBytes) of
// gen2, a minute at least after the first; if the run ends before, the
// pair is abandoned. Constant memory; no I/O.
type leakJudge struct {
	cfg   LeakWatch
	first time.Time // the first GC seen (zero: none yet)

	runStart        time.Time
	runFrom, runMax uint64
	runGCs          int

	armed    bool      // the first snapshot taken, waiting for further growth
	ref      uint64    // gen2 when it was taken
	pairAt   time.Time // when the last first snapshot was taken (zero: never)
	prevAt   time.Time // pairAt before it (skipped restores it)
	lastFrom uint64    // the run's first size when the last pair began (for the log)
}

// gc judges a GC that ended at time at, after which gen2 is gen2 bytes;
// full: a gen2 GC (only those are judged: after a younger GC gen2 holds
// what was promoted into it, garbage or not).
func (j *leakJudge) gc(at time.Time, gen2 uint64, full bool) leakAction {
	if j.first.IsZero() {
		j.first = at
	}
	if !full || at.Sub(j.first) < j.cfg.settle() {
		return leakNone
	}
	if j.runGCs == 0 || float64(gen2) < float64(j.runMax)*(1-leakTolerance) {
		j.runStart, j.runFrom, j.runMax, j.runGCs = at, gen2, gen2, 1
		j.armed = false // the growth stopped: the pair is abandoned
		return leakNone
	}
	j.runGCs++
	j.runMax = max(j.runMax, gen2)
	g := j.cfg.growth()
	if j.armed {
		if at.Sub(j.pairAt) >= leakSecondAfter && grew(j.ref, gen2, g) {
			j.armed = false
			return leakSecond
		}
		return leakNone
	}
	if at.Sub(j.runStart) < j.cfg.window() || j.runGCs < leakMinGCs || !grew(j.runFrom, gen2, g) {
		return leakNone
	}
	if !j.pairAt.IsZero() && at.Sub(j.pairAt) < j.cfg.every() {
		return leakNone
	}
	j.armed, j.ref, j.prevAt, j.pairAt, j.lastFrom = true, gen2, j.pairAt, at, j.runFrom
	return leakFirst
}

// skipped is told that the snapshot asked for was not taken (another
// was being taken through /debug/pprof/heap): a first is asked for again
// at the next gen2 GC that judges growth, the rate limit untouched.
func (j *leakJudge) skipped(a leakAction) {
	if a == leakFirst {
		j.armed, j.pairAt = false, j.prevAt
	} else {
		j.armed = true // the second is asked for again
	}
}

// grew: to is pct % (and leakMinBytes) above from.
func grew(from, to uint64, pct float64) bool {
	return to >= from+leakMinBytes && float64(to-from)*100 >= float64(from)*pct
}

// failed is told that a snapshot of the pair failed: no second without
// a first (the rate limit still counts the attempt).
func (j *leakJudge) failed() { j.armed = false }

// watchLeak is Config.LeakWatch's watch, called for every GC of the
// target's monitoring session (on its goroutine: it never blocks).
func (t *target) watchLeak(ctx context.Context, g *gcpause.GC, now time.Time) {
	if !g.HasHeapStats {
		return
	}
	w := &t.watch
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.busy {
		return // the snapshot's own GC
	}
	if !w.judgeSet {
		w.judge.cfg, w.judgeSet = t.d.cfg.LeakWatch, true
	}
	gen2 := g.HeapStats.GenerationSize[2]
	a := w.judge.gc(now, gen2, g.Generation == 2)
	if a == leakNone {
		return
	}
	if !t.snapshotting.busy.CompareAndSwap(false, true) {
		// A snapshot through /debug/pprof/heap: this one is not taken
		// now, but at the next gen2 GC.
		w.judge.skipped(a)
		return
	}
	d := t.d
	before := w.judge.ref
	if a == leakFirst {
		w.types = nil // a new pair: its first is the baseline
		before = w.judge.lastFrom
		d.log.Warn("gen2 grew steadily: the leak watch takes a heap snapshot (a blocking gen2 GC), another after further growth",
			"pid", t.PidLabel(), "process", t.Name(), "gen2_from_bytes", w.judge.lastFrom, "gen2_bytes", gen2,
			"over", now.Sub(w.judge.runStart).Round(time.Second).String())
	}
	w.busy, w.sawGC = true, false
	pct := w.judge.cfg.growth()
	d.fleet.Go(func() {
		defer t.snapshotting.busy.Store(false)
		if !t.autoSnapshot(ctx, before, gen2, pct) {
			w.mu.Lock()
			w.judge.failed()
			w.mu.Unlock()
		}
	})
}
