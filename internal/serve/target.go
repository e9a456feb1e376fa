package serve

import (
	"context"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/hang"
	"github.com/clrspy/clrspy/internal/cdac"
	"github.com/clrspy/clrspy/internal/metrics"
	"github.com/clrspy/clrspy/internal/monitor"
	"github.com/clrspy/clrspy/internal/procfs"
	"github.com/clrspy/clrspy/perf"
	"github.com/clrspy/clrspy/report"
	"github.com/clrspy/clrspy/source"
	"github.com/clrspy/clrspy/stacks"
	"github.com/clrspy/clrspy/threadpool"
)

// target is one monitored process.
type target struct {
	d     *Daemon
	key   string
	order uint64
	kind  source.Kind // Attach or Listen
	// pid: attach: the host pid; listen: the pid the runtime advertised.
	// hostPid: the pid in clrspy's namespace (0: not visible).
	pid, hostPid int
	ticks        int64           // attach: the process's start ticks
	rt           *source.Runtime // listen
	name         string
	pidLabel     string
	uid          int // listen: the peer's uid

	// Guarded by d.mu.
	mon     *monitor.Monitor
	hist    *metrics.GCHistograms
	up      bool
	state   string
	lastErr string
	endedAt time.Time
	stream  *source.Stream
	// tap: the session's events for the analyses /triage attaches.
	tap *tap
	// ctrSID: the session's counters session id (triage reads its meter).
	ctrSID string
	// dumpGCs: the GCs heap snapshots induced (heapDumped; under d.mu).
	dumpGCs []uint32
	opened  int // sessions opened
	// sessID is the current session's id for Config.Sessions.
	sessID string

	profiling slot
	// stacking holds the one /debug/stacks snapshot at a time.
	stacking slot
	// ownerNoted: the root-attaches-to-another-user notice was logged.
	ownerNoted atomic.Bool
	// snapshotting holds the one heap snapshot at a time
	// (/debug/pprof/heap).
	snapshotting slot
	// typeNames are the type names of the target's snapshots so far, by
	// TypeID (used and replaced by the slot's holder).
	typeNames map[uint64]string
	// watch is Config.SnapshotOnGen2Growth's state.
	watch heapWatch
	// mem is the memory split's samples (Config.MemoryInterval).
	mem memWatch
}

// maxFirstAttempts bounds the tries to open a first session on a process
// that never had one (it may not be a .NET process clrspy can use).
const maxFirstAttempts = 5

// startLocked files the target and runs its session loop in its own
// goroutine (d.mu held).
func (d *Daemon) startLocked(t *target) {
	ctx := d.ctx
	t.order = nextOrder()
	t.state = "attaching"
	d.targets[t.key] = t
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		t.run(ctx)
	}()
}

// alive reports whether the target's process still runs.
func (t *target) alive() bool {
	if t.kind == source.Listen {
		select {
		case <-t.rt.Gone():
			return false
		default:
			return true
		}
	}
	ticks, err := procfs.StartTicks(t.pid)
	return err == nil && ticks == t.ticks
}

// meterMinAge is how long a process must have run before a session on it
// asks for the runtime's System.Runtime meter (.NET 9+), whose totals
// since the process start (GCs, pause time, lock contentions) seed the
// metrics (monitor.BeforeSession). Younger processes get the
// EventCounters only: on .NET 10 a process that exits within about a
// second of a meter session's start may hang at exit (counters.Options),
// a risk for the short-lived processes serve finds as they start, and for
// them "since the attach" is nearly "since the start". metrics' help
// texts quote it.
const meterMinAge = 10 * time.Second

// meterSafe reports whether the session may ask for the runtime's meter:
// an attached process that ran meterMinAge. In listen mode the session
// begins with the process: its counts run from the start anyway.
func (t *target) meterSafe() bool {
	if t.kind != source.Attach {
		return false
	}
	start, err := procfs.StartTime(t.pid)
	return err == nil && time.Since(start) >= meterMinAge
}

// spec is the monitoring session's configuration.
func (t *target) spec(opts *monitor.Options) source.Spec {
	// The monitor's providers, derived from its analyses' events
	// (serve's monitors run with Locks and ThreadPool, so the thread
	// events that name lock owners come with the pool's informational
	// ones).
	ps := monitor.Providers(opts)
	// Reads paced to two a second: serve's figures are scraped every few
	// seconds, and each read of a runtime's ~10 flushes a second is a
	// wake-up (measured: 10 GC-busy processes cost 2.8 % of a core, mostly
	// the kernel waking serve's goroutines).
	// Throw sites need the exception events' stacks.
	return source.Spec{Providers: ps, BufferMB: t.d.cfg.bufferMB(), NoStackwalk: !opts.Exceptions, ReadEvery: 500 * time.Millisecond}
}

// open opens a session on the target (a stackless one when the runtime
// can, CollectTracing3 and later).
func (t *target) open(spec source.Spec) (*source.Stream, error) {
	st, err := t.openSpec(spec)
	if err != nil && spec.NoStackwalk && isUnknownCommand(err) {
		spec.NoStackwalk = false
		st, err = t.openSpec(spec)
	}
	return st, err
}

func (t *target) openSpec(spec source.Spec) (*source.Stream, error) {
	t.noteOwner()
	if t.kind == source.Listen {
		return t.rt.Open(spec)
	}
	spec.Pid = t.pid
	return source.Open(spec)
}

// noteOwner logs, once per target, that serve running as root attaches
// to another user's process (as the one-shot commands say it): its data
// is then served to clrspy's user and root, and to that user on
// loopback.
func (t *target) noteOwner() {
	if os.Geteuid() != 0 || t.ownerNoted.Load() {
		return
	}
	if o := t.owner(); o > 0 && t.ownerNoted.CompareAndSwap(false, true) {
		t.d.log.Info("attaching as root to another user's process", "pid", t.pidLabel, "process", t.name, "uid", o)
	}
}

func isUnknownCommand(err error) bool {
	return err != nil && strings.Contains(err.Error(), "this runtime cannot run the session")
}

// run opens sessions until the process ends or ctx is done.
func (t *target) run(ctx context.Context) {
	d := t.d
	delay := d.cfg.retry()
	attempts := 0
	var objectTypes func([]uint64) (map[uint64]string, string)
	if t.hostPid > 0 {
		// The locks' object types from the target's memory (.NET 9+).
		nm := cdac.NewNamer(t.hostPid)
		defer nm.Close()
		objectTypes = nm.Names
	}
	for {
		opts := monitor.Options{Locks: true, Exceptions: d.cfg.Exceptions, ThreadPool: true, Requests: true, ObjectTypes: objectTypes}
		opts.OnDeadlock = func(c hang.Cycle) {
			d.log.Warn("deadlock: threads wait in a cycle for each other's locks (/debug/stacks?pid= names them)", "pid", t.pidLabel, "process", t.name, "cycle", c.String())
		}
		opts.Counters.Interval = d.cfg.counterInterval()
		opts.Counters.Meter = t.meterSafe()
		spec := t.spec(&opts)
		st, err := t.open(spec)
		if err != nil {
			kind := errKind(err)
			d.countError(kind)
			attempts++
			if ctx.Err() != nil {
				t.finish("", false)
				return
			}
			if !t.alive() || kind == "gone" || kind == "permission" || kind == "disabled" || (t.opened == 0 && attempts >= maxFirstAttempts) {
				d.log.Warn("cannot monitor process", "pid", t.pidLabel, "process", t.name, "error", errLine(err))
				t.finish(errLine(err), true)
				return
			}
			d.log.Warn("session failed, retrying", "pid", t.pidLabel, "process", t.name, "in", delay.String(), "error", errLine(err))
			t.setState("retrying", errLine(err))
			if !sleep(ctx, delay) {
				t.finish("", false)
				return
			}
			delay = min(2*delay, time.Minute)
			continue
		}
		end, runErr := t.session(ctx, st, &opts)
		if ctx.Err() != nil {
			t.finish("", false)
			return
		}
		if end.TargetExited || !t.alive() {
			d.log.Info("process exited", "pid", t.pidLabel, "process", t.name)
			t.finish("", false)
			return
		}
		// The session ended on its own with the process alive: open
		// another.
		msg := "the session ended"
		if runErr != nil {
			msg = errLine(runErr)
		}
		d.countError("session")
		d.log.Warn("session ended, reopening", "pid", t.pidLabel, "process", t.name, "in", delay.String(), "error", msg)
		t.setState("retrying", msg)
		attempts = 0
		if !sleep(ctx, delay) {
			t.finish("", false)
			return
		}
	}
}

// session runs one open stream into a fresh monitor.
func (t *target) session(ctx context.Context, st *source.Stream, opts *monitor.Options) (analysis.End, error) {
	d := t.d
	hist := metrics.NewGCHistograms()
	var plog *report.PauseLog
	var m *monitor.Monitor
	if d.cfg.PauseLog != nil {
		o := *d.cfg.PauseLog
		o.Attrs = append(append([]slog.Attr(nil), o.Attrs...), slog.String("pid", t.pidLabel), slog.String("process", t.name))
		// Each line says how many requests the pause froze (OnGC runs on
		// the goroutine that feeds m, after New).
		o.RequestsFrozen = func(g *gcpause.GC) (int64, bool) { return m.RequestsFrozen(g) }
		plog = report.NewPauseLog(d.out, o)
	}
	tp := &tap{}
	also := []analysis.Analyzer{tp}
	trig := d.caps.trigger(st.Header(), t, d.log)
	if trig != nil {
		also = append(also, trig)
	}
	opts.OnGCStart = nil // the options outlive a session
	if trig != nil {
		opts.OnGCStart = trig.GCStart // before the trigger records the GCStart
	}
	opts.OnGC = func(g *gcpause.GC) {
		hist.Observe(g)
		if plog != nil {
			// A heap snapshot's GC is logged as the snapshot's, not the
			// application's induced GC: the snapshot session's gcpause
			// marked it (HeapDump, recorded by heapDumped before the
			// snapshot's slot is released), or, when this session sees it
			// first, it is an induced gen2 GC while the slot is held.
			lg := g
			if g.Induced && g.Generation == 2 && (t.snapshotting.busy.Load() || d.isHeapDump(t, g.Number)) {
				c := *g
				c.HeapDump = true
				lg = &c
			}
			plog.GC(lg)
		}
		if trig != nil {
			trig.GC(g)
		}
		if pct := d.cfg.SnapshotOnGen2Growth; pct > 0 {
			t.watchGC(ctx, g, pct)
		} else if !d.cfg.LeakWatch.Off {
			t.watchLeak(ctx, g, time.Now())
		}
	}
	if plog != nil {
		opts.OnSuspension = plog.Suspension
	}
	opts.OnStarvation = func(e threadpool.Episode) {
		// The episode has lasted 100 ms; it is logged once, at its start.
		d.log.Warn("thread pool starvation", "pid", t.pidLabel, "process", t.name, "trigger", e.Trigger,
			"threads", e.ThreadsMax, "injections", e.Injections)
	}
	obs := d.cfg.Sessions
	id := strconv.FormatUint(nextOrder(), 10)
	if obs != nil {
		obs.Prepare(id, opts)
	}
	m = monitor.New(st.Header(), *opts)
	d.mu.Lock()
	t.mon, t.hist, t.up, t.stream, t.tap, t.ctrSID = m, hist, true, st, tp, opts.Counters.SessionID
	t.state, t.lastErr = "running", ""
	t.opened++
	d.sessions++
	prev := t.sessID
	t.sessID = id
	d.mu.Unlock()
	if obs != nil {
		if prev != "" {
			obs.Remove(prev)
		}
		pid := t.hostPid
		if pid <= 0 {
			pid = t.pid
		}
		obs.Add(id, t.name, pid, st.Header(), m)
	}
	d.log.Info("monitoring", "pid", t.pidLabel, "process", t.name, "kind", t.kind.String())
	cpuDone := make(chan struct{})
	cctx, cancelCPU := context.WithCancel(ctx)
	if d.cfg.CPUProfile.Hz > 0 {
		go func() { defer close(cpuDone); t.cpuProfiles(cctx, id) }()
	} else {
		close(cpuDone)
	}
	if opts.Exceptions || opts.CPU {
		// A session names only the code compiled after it began: a
		// second session's rundown names the rest (throw sites, stacks).
		go func() {
			if err := st.Rundown(stacks.SymbolProviders(), m.SymbolEvent); err != nil {
				d.log.Debug("no rundown to name compiled code", "pid", t.pidLabel, "error", errLine(err))
			}
		}()
	}
	seedDone := make(chan struct{})
	if t.kind == source.Attach && !opts.Counters.Meter {
		go func() { defer close(seedDone); t.seedLater(cctx, m) }()
	} else {
		close(seedDone)
	}
	end, err := m.Run(ctx, st, also...)
	cancelCPU()
	<-cpuDone
	<-seedDone
	st.Close()
	if obs != nil {
		obs.Ended(id)
	}
	d.mu.Lock()
	t.up, t.stream, t.tap = false, nil, nil
	d.sessions--
	d.mu.Unlock()
	return end, err
}

// finish records that the target will have no more sessions: exited
// (failed: no session could be opened) or stopped. A target that never
// had a session is forgotten at once.
func (t *target) finish(errMsg string, failed bool) {
	d := t.d
	d.mu.Lock()
	defer d.mu.Unlock()
	t.up = false
	t.endedAt = time.Now()
	t.lastErr = errMsg
	switch {
	case d.ctx.Err() != nil:
		t.state = "stopped"
	case failed:
		t.state = "failed"
	default:
		t.state = "exited"
	}
	if t.mon == nil && d.ctx.Err() == nil {
		delete(d.targets, t.key)
	}
}

func (t *target) setState(state, errMsg string) {
	t.d.mu.Lock()
	t.state, t.lastErr = state, errMsg
	t.d.mu.Unlock()
}

// sleep waits d or until ctx is done (false).
func sleep(ctx context.Context, d time.Duration) bool {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// cpuProfiles profiles the target with the perf sampler, one window after
// the other, until ctx ends (the session's end), and gives each window's
// profile to Config.Sessions. Where perf may not sample the process it
// says why once and stops.
func (t *target) cpuProfiles(ctx context.Context, id string) {
	d := t.d
	obs, _ := d.cfg.Sessions.(CPUSessions)
	pid := t.hostPid
	if pid <= 0 {
		d.log.Warn("no CPU profile: the perf sampler needs the process in clrspy's pid namespace", "pid", t.pidLabel, "process", t.name)
		return
	}
	opts := perf.Options{Hz: d.cfg.CPUProfile.Hz}
	if _, err := perf.Check(pid, opts); err != nil {
		d.log.Warn("no CPU profile", "pid", t.pidLabel, "process", t.name, "err", err)
		return
	}
	for ctx.Err() == nil {
		p, err := perf.Profile(ctx, pid, perf.ProfileOptions{Options: opts, Duration: d.cfg.cpuWindow()})
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			if !procfs.Exists(pid) {
				return // the process exited: the session ends too
			}
			d.log.Warn("CPU profile", "pid", t.pidLabel, "process", t.name, "err", err)
			if !sleep(ctx, d.cfg.cpuWindow()) {
				return
			}
			continue
		}
		if obs != nil && p.Total > 0 {
			obs.SetCPU(id, report.LabelCPU, p)
		}
	}
}
