package fleet

import (
	"context"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/hang"
	"github.com/clrspy/clrspy/internal/cdac"
	"github.com/clrspy/clrspy/internal/monitor"
	"github.com/clrspy/clrspy/internal/procfs"
	"github.com/clrspy/clrspy/ipc"
	"github.com/clrspy/clrspy/memory"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/source"
	"github.com/clrspy/clrspy/stacks"
	"github.com/clrspy/clrspy/threadpool"
)

// Source is one monitored process: its identity, the state of its
// sessions, its latest Session, the facts read beside them (memory, the
// GCs clrspy's own sessions induced), the values the surfaces keep for it
// (Value), and Open for a second session on it.
type Source struct {
	f     *Fleet
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

	// Guarded by f.mu.
	sess    *Session // the latest
	up      bool
	state   string
	lastErr string
	endedAt time.Time
	stream  *source.Stream
	// dumpGCs: the GCs heap snapshots induced (HeapDumped).
	dumpGCs []uint32
	opened  int // sessions opened
	vals    map[any]any

	// ownerNoted: the root-attaches-to-another-user notice was logged.
	ownerNoted atomic.Bool
	// mem is the memory split's samples (Config.MemoryInterval).
	mem memWatch
}

// PidLabel is the target's pid label: its pid in clrspy's namespace, or
// the one a listen-mode runtime advertised (with its cookie when two
// share it).
func (t *Source) PidLabel() string { return t.pidLabel }

// Name is the process label.
func (t *Source) Name() string { return t.name }

// Pid is the process id: attach: the host's; listen: the one the runtime
// advertised, its pid in its own namespace.
func (t *Source) Pid() int { return t.pid }

// HostPid is the pid in clrspy's namespace (0: not visible there): the
// perf sampler and /proc are only aimed at it.
func (t *Source) HostPid() int { return t.hostPid }

// ProcPid is the target's pid in clrspy's namespace for /proc (0: not
// visible).
func (t *Source) ProcPid() int {
	if t.hostPid == 0 && t.kind != source.Listen {
		return t.pid
	}
	return t.hostPid
}

// Up reports whether a session is open on the target now.
func (t *Source) Up() bool {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	return t.up
}

// Session is the target's latest session (nil before the first).
func (t *Source) Session() *Session {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	return t.sess
}

// Value is the value a surface keeps for the target under key (nil: none).
func (t *Source) Value(key any) any {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	return t.vals[key]
}

// Init returns the value under key, first made by mk.
func (t *Source) Init(key any, mk func() any) any {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	v, ok := t.vals[key]
	if !ok {
		if t.vals == nil {
			t.vals = map[any]any{}
		}
		v = mk()
		t.vals[key] = v
	}
	return v
}

// SetValue keeps v for the target under key.
func (t *Source) SetValue(key, v any) {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	if t.vals == nil {
		t.vals = map[any]any{}
	}
	t.vals[key] = v
}

// Owner is the uid t runs as: the peer's for a listen-mode runtime, the
// process's in /proc otherwise (-1: unknown).
func (t *Source) Owner() int {
	if t.kind == source.Listen {
		return t.uid
	}
	pid := t.hostPid
	if pid <= 0 {
		pid = t.pid
	}
	return ipc.ProcessUID(pid)
}

// maxHeapDumps bounds the snapshot GCs a target remembers.
const maxHeapDumps = 64

// HeapDumped records that GC n of t was a heap snapshot's (the snapshot
// session's gcpause HeapDump mark): the judgements keep it out of the
// application's induced GCs and pauses.
func (t *Source) HeapDumped(n uint32) {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	if len(t.dumpGCs) == maxHeapDumps {
		t.dumpGCs = t.dumpGCs[1:]
	}
	t.dumpGCs = append(t.dumpGCs, n)
}

// IsHeapDump says whether GC n of t was a heap snapshot's (HeapDumped).
func (t *Source) IsHeapDump(n uint32) bool {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	return slices.Contains(t.dumpGCs, n)
}

// HeapDumps are the GCs HeapDumped recorded, oldest first.
func (t *Source) HeapDumps() []uint32 {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	return slices.Clone(t.dumpGCs)
}

// Memory is the target's latest memory splits, oldest first, and its
// memory cgroup at the latest read (nil: none).
func (t *Source) Memory() ([]memory.Sample, *procfs.CgroupMemory) { return t.mem.get() }

// CPUDemandPct is the process's CPU demand as a share of cores over the
// memory readings kept, by triage's formula; -1 with fewer than two.
func (t *Source) CPUDemandPct(cores int) float64 { return t.mem.demandPct(cores) }

// MaxFirstAttempts bounds the tries to open a first session on a process
// that never had one (it may not be a .NET process clrspy can use).
const MaxFirstAttempts = 5

// startLocked files the target and runs its session loop in its own
// goroutine (f.mu held).
func (f *Fleet) startLocked(t *Source) {
	ctx := f.ctx
	t.order = nextOrder()
	t.state = "attaching"
	f.targets[t.key] = t
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		t.run(ctx)
	}()
}

// alive reports whether the target's process still runs.
func (t *Source) alive() bool {
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
func (t *Source) meterSafe() bool {
	if t.kind != source.Attach {
		return false
	}
	start, err := procfs.StartTime(t.pid)
	return err == nil && time.Since(start) >= meterMinAge
}

// spec is the monitoring session's configuration.
func (t *Source) spec(opts *monitor.Options) source.Spec {
	// The monitor's providers, derived from its analyses' events
	// (the monitors run with Locks and ThreadPool, so the thread events
	// that name lock owners come with the pool's informational ones).
	ps := monitor.Providers(opts)
	// Reads paced to two a second: serve's figures are scraped every few
	// seconds, and each read of a runtime's ~10 flushes a second is a
	// wake-up (measured: 10 GC-busy processes cost 2.8 % of a core, mostly
	// the kernel waking serve's goroutines).
	// Throw sites need the exception events' stacks.
	return source.Spec{Providers: ps, BufferMB: t.f.cfg.BufferSize(), NoStackwalk: !opts.Exceptions, ReadEvery: 500 * time.Millisecond}
}

// Open opens a session of spec on the target (through its reverse
// connection in listen mode): the monitoring session, or a second, short
// one for a job (a profile, a heap snapshot). A stackless spec
// (NoStackwalk) is opened with stacks on a runtime that cannot drop them
// (before CollectTracing3).
func (t *Source) Open(spec source.Spec) (*source.Stream, error) {
	st, err := t.openSpec(spec)
	if err != nil && spec.NoStackwalk && isUnknownCommand(err) {
		spec.NoStackwalk = false
		st, err = t.openSpec(spec)
	}
	return st, err
}

func (t *Source) openSpec(spec source.Spec) (*source.Stream, error) {
	t.noteOwner()
	if t.kind == source.Listen {
		return t.rt.Open(spec)
	}
	spec.Pid = t.pid
	return source.Open(spec)
}

// noteOwner logs, once per target, that clrspy running as root attaches
// to another user's process (as the one-shot commands say it): its data
// is then served to clrspy's user and root, and to that user on
// loopback.
func (t *Source) noteOwner() {
	if os.Geteuid() != 0 || t.ownerNoted.Load() {
		return
	}
	if o := t.Owner(); o > 0 && t.ownerNoted.CompareAndSwap(false, true) {
		t.f.log.Info("attaching as root to another user's process", "pid", t.pidLabel, "process", t.name, "uid", o)
	}
}

// run opens sessions until the process ends or ctx is done.
func (t *Source) run(ctx context.Context) {
	f := t.f
	delay := f.cfg.retry()
	attempts := 0
	var objectTypes func([]uint64) (map[uint64]string, string)
	if t.hostPid > 0 {
		// The locks' object types from the target's memory (.NET 9+).
		nm := cdac.NewNamer(t.hostPid)
		defer nm.Close()
		objectTypes = nm.Names
	}
	for {
		opts := f.options(t, objectTypes)
		opts.OnDeadlock = func(c hang.Cycle) {
			f.log.Warn("deadlock: threads wait in a cycle for each other's locks (/debug/stacks?pid= names them)", "pid", t.pidLabel, "process", t.name, "cycle", c.String())
		}
		opts.OnStarvation = func(e threadpool.Episode) {
			// The episode has lasted 100 ms; it is logged once, at its start.
			f.log.Warn("thread pool starvation", "pid", t.pidLabel, "process", t.name, "trigger", e.Trigger,
				"threads", e.ThreadsMax, "injections", e.Injections)
		}
		st, err := t.Open(t.spec(&opts))
		if err != nil {
			kind := errKind(err)
			f.countError(kind)
			attempts++
			if ctx.Err() != nil {
				t.finish("", false)
				return
			}
			if !t.alive() || kind == "gone" || kind == "permission" || kind == "disabled" || (t.opened == 0 && attempts >= MaxFirstAttempts) {
				f.log.Warn("cannot monitor process", "pid", t.pidLabel, "process", t.name, "error", ErrLine(err))
				t.finish(ErrLine(err), true)
				return
			}
			f.log.Warn("session failed, retrying", "pid", t.pidLabel, "process", t.name, "in", delay.String(), "error", ErrLine(err))
			t.setState("retrying", ErrLine(err))
			if !Sleep(ctx, delay) {
				t.finish("", false)
				return
			}
			delay = min(2*delay, time.Minute)
			continue
		}
		end, runErr := t.session(ctx, st, opts)
		if ctx.Err() != nil {
			t.finish("", false)
			return
		}
		if end.TargetExited || !t.alive() {
			f.log.Info("process exited", "pid", t.pidLabel, "process", t.name)
			t.finish("", false)
			return
		}
		// The session ended on its own with the process alive: open
		// another.
		msg := "the session ended"
		if runErr != nil {
			msg = ErrLine(runErr)
		}
		f.countError("session")
		f.log.Warn("session ended, reopening", "pid", t.pidLabel, "process", t.name, "in", delay.String(), "error", msg)
		t.setState("retrying", msg)
		attempts = 0
		if !Sleep(ctx, delay) {
			t.finish("", false)
			return
		}
	}
}

// session runs one open stream into a fresh monitor, the watchers beside.
func (t *Source) session(ctx context.Context, st *source.Stream, opts monitor.Options) (analysis.End, error) {
	f := t.f
	s, also := t.Follow(st, opts)
	m := s.Monitor()
	f.mu.Lock()
	t.stream = st
	t.opened++
	f.sessions++
	f.mu.Unlock()
	f.log.Info("monitoring", "pid", t.pidLabel, "process", t.name, "kind", t.kind.String())
	var beside sync.WaitGroup
	cctx, cancel := context.WithCancel(ctx)
	for _, w := range s.watchers {
		if w.Run != nil {
			beside.Add(1)
			go func() { defer beside.Done(); w.Run(cctx, s) }()
		}
	}
	if opts.Exceptions || opts.CPU {
		// A session names only the code compiled after it began: a
		// second session's rundown names the rest (throw sites, stacks).
		go func() {
			if err := st.Rundown(stacks.SymbolProviders(), m.SymbolEvent); err != nil {
				f.log.Debug("no rundown to name compiled code", "pid", t.pidLabel, "error", ErrLine(err))
			}
		}()
	}
	if t.kind == source.Attach && !opts.Counters.Meter {
		beside.Add(1)
		go func() { defer beside.Done(); t.seedLater(cctx, m) }()
	}
	end, err := m.Run(ctx, st, also...)
	cancel()
	beside.Wait()
	st.Close()
	s.Ended()
	f.mu.Lock()
	t.stream = nil
	f.sessions--
	f.mu.Unlock()
	return end, err
}

// Follow makes the monitor of a session on the target, opts with every
// watcher's hooks, and makes it the target's latest (the one before is
// removed). The caller feeds the monitor the stream, with the analyzers
// returned beside it (Monitor.Run), then calls Ended.
func (t *Source) Follow(st *source.Stream, opts monitor.Options) (*Session, []analysis.Analyzer) {
	f := t.f
	f.mu.Lock()
	f.sessionSeq++
	s := &Session{src: t, order: f.sessionSeq, hdr: st.Header(), ctrSID: opts.Counters.SessionID, tap: &tap{}, watchers: f.watchers}
	f.mu.Unlock()
	s.id = strconv.FormatUint(s.order, 10)
	also := []analysis.Analyzer{s.tap}
	for _, w := range s.watchers {
		if w.Prepare != nil {
			also = append(also, w.Prepare(s, &opts)...)
		}
	}
	m := monitor.New(s.hdr, opts)
	s.mu.Lock()
	s.mon = m
	s.mu.Unlock()
	f.mu.Lock()
	prev := t.sess
	t.sess, t.up = s, true
	t.state, t.lastErr = "running", ""
	f.mu.Unlock()
	if prev != nil {
		prev.removed()
	}
	return s, also
}

// finish records that the target will have no more sessions: exited
// (failed: no session could be opened) or stopped. A target that never
// had a session is forgotten at once.
func (t *Source) finish(errMsg string, failed bool) {
	f := t.f
	f.mu.Lock()
	defer f.mu.Unlock()
	t.up = false
	t.endedAt = time.Now()
	t.lastErr = errMsg
	switch {
	case f.ctx.Err() != nil:
		t.state = "stopped"
	case failed:
		t.state = "failed"
	default:
		t.state = "exited"
	}
	if t.sess == nil && f.ctx.Err() == nil {
		delete(f.targets, t.key)
	}
}

func (t *Source) setState(state, errMsg string) {
	t.f.mu.Lock()
	t.state, t.lastErr = state, errMsg
	t.f.mu.Unlock()
}

// Sleep waits d or until ctx is done (false).
func Sleep(ctx context.Context, d time.Duration) bool {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// Watcher follows every session of a fleet: the surfaces (metrics'
// histograms, the live web view, serve's pause log and captures) add
// their hooks to its monitor and keep their state per session (Session
// Value). Every field is optional.
type Watcher struct {
	// Prepare adds hooks to the options of a session's monitor before the
	// monitor is made, and returns analyzers to run beside it.
	Prepare func(s *Session, opts *monitor.Options) []analysis.Analyzer
	// Run runs beside the session once its monitor is made, until ctx
	// ends (the session's stream ended); the session waits for it.
	Run func(ctx context.Context, s *Session)
	// Ended: the session's stream ended (its monitor read it all).
	Ended func(s *Session)
	// Removed: the session is gone (replaced by the target's next one,
	// or the target dropped after Grace).
	Removed func(s *Session)
}

// Session is one monitoring session of a target: its stream's header,
// its monitor, the tap on its events, the values the watchers keep.
type Session struct {
	src      *Source
	id       string
	order    uint64
	hdr      *nettrace.Header
	mon      *monitor.Monitor
	ctrSID   string
	tap      *tap
	watchers []Watcher

	mu   sync.Mutex
	vals map[any]any
}

// ID names the session (a target whose session is reopened gets a new one).
func (s *Session) ID() string { return s.id }

// Source is the session's target.
func (s *Session) Source() *Source { return s.src }

// Context ends when the fleet stops (Run's context; a static fleet's
// never ends): work a session's hooks start outlives the session, not
// the fleet.
func (s *Session) Context() context.Context {
	s.src.f.mu.Lock()
	defer s.src.f.mu.Unlock()
	if c := s.src.f.ctx; c != nil {
		return c
	}
	return context.Background()
}

// Header is the session's stream's header.
func (s *Session) Header() *nettrace.Header { return s.hdr }

// Monitor is the session's monitor.
func (s *Session) Monitor() *monitor.Monitor {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mon
}

// CounterSession is the session's counters session id (triage reads its
// meter).
func (s *Session) CounterSession() string { return s.ctrSID }

// Value is what a watcher keeps for the session under key (nil: none).
func (s *Session) Value(key any) any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.vals[key]
}

// SetValue keeps v for the session under key.
func (s *Session) SetValue(key, v any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.vals == nil {
		s.vals = map[any]any{}
	}
	s.vals[key] = v
}

// Attach hands the session's events to a from now on (from any
// goroutine; /triage attaches triage's analyses for its window).
func (s *Session) Attach(a analysis.Analyzer) { s.tap.attach(a) }

// Detach stops handing events to a; once it returns, a sees no more
// events and may be read.
func (s *Session) Detach(a analysis.Analyzer) { s.tap.detach(a) }

// Ended tells the watchers the session's stream has ended.
func (s *Session) Ended() {
	for _, w := range s.watchers {
		if w.Ended != nil {
			w.Ended(s)
		}
	}
	s.src.f.mu.Lock()
	if s.src.sess == s {
		s.src.up = false
	}
	s.src.f.mu.Unlock()
}

func (s *Session) removed() {
	for _, w := range s.watchers {
		if w.Removed != nil {
			w.Removed(s)
		}
	}
}
