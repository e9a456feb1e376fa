package fleet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/clrspy/clrspy/internal/monitor"
	"github.com/clrspy/clrspy/ipc"
	"github.com/clrspy/clrspy/source"
)

// Config configures a Fleet. The zero value watches every process this
// user may attach to, with the defaults below.
type Config struct {
	// Pids and Names narrow the targets (either list may match; empty:
	// every process).
	Pids  []int
	Names []string
	// NoAttach turns discovery off: only runtimes connecting to the
	// DiagnosticPort are monitored.
	NoAttach bool
	// DiagnosticPort is the path of a reverse diagnostic port runtimes
	// connect to (DOTNET_DiagnosticPorts=PATH); PortMode its file mode (0:
	// 0600).
	DiagnosticPort string
	PortMode       os.FileMode
	// Grace is how long an exited target stays listed (0: 1 min).
	Grace time.Duration
	// ScanInterval is the period of the /proc scan (0: 1 s).
	ScanInterval time.Duration
	// SocketDirs are the directories watched for new diagnostics sockets
	// (nil: /tmp and $TMPDIR). Processes with another TMPDIR are found by
	// the scan, which then watches their directory too.
	SocketDirs []string
	// BufferMB is the runtime-side buffer of each session (0: 64).
	BufferMB uint32
	// CounterInterval is how often the runtime publishes its counters
	// (0: 5 s).
	CounterInterval time.Duration
	// MemoryInterval is how often each target's memory split is read from
	// its /proc/PID/smaps (Source.Memory; 0: 10 s; negative: never).
	MemoryInterval time.Duration
	// Exceptions also asks every session for the exception events with
	// their stacks (the session is then no longer stackless: every event
	// carries a stack).
	Exceptions bool
	// Retry is the first delay before a failed session is opened again
	// (doubled up to a minute; 0: 2 s).
	Retry time.Duration
	// CaptureErrors, when set, counts the owner's failed captures by
	// reason for Health.
	CaptureErrors func() map[string]uint64
}

func (c *Config) grace() time.Duration           { return Or(c.Grace, time.Minute) }
func (c *Config) scanInterval() time.Duration    { return Or(c.ScanInterval, time.Second) }
func (c *Config) retry() time.Duration           { return Or(c.Retry, 2*time.Second) }
func (c *Config) counterInterval() time.Duration { return Or(c.CounterInterval, 5*time.Second) }

func (c *Config) memoryInterval() time.Duration {
	if c.MemoryInterval < 0 {
		return -1
	}
	return Or(c.MemoryInterval, 10*time.Second)
}

// BufferSize is the runtime-side buffer of each session, in MiB.
func (c *Config) BufferSize() uint32 {
	if c.BufferMB == 0 {
		return 64
	}
	return c.BufferMB
}

// Or is v, or def when v is not positive.
func Or(v, def time.Duration) time.Duration {
	if v <= 0 {
		return def
	}
	return v
}

// Check validates the fleet's part of a configuration: one line per
// problem, in the flags' words.
func (c *Config) Check() error {
	for _, p := range c.Pids {
		if p <= 0 {
			return fmt.Errorf("--pid %d: a process id is positive", p)
		}
	}
	for _, n := range c.Names {
		if n == "" {
			return errors.New("--name: empty name")
		}
	}
	if c.NoAttach && c.DiagnosticPort == "" {
		return errors.New("--attach=false leaves nothing to monitor: give --diagnostic-port PATH")
	}
	switch {
	case c.Grace < 0:
		return fmt.Errorf("--grace %v: must not be negative", c.Grace)
	case c.CounterInterval < 0:
		return fmt.Errorf("--counter-interval %v: must not be negative", c.CounterInterval)
	}
	return nil
}

// Fleet is the registry of monitored processes: discovery, attach,
// retry, and one Source per target. Create it with New, add Watchers,
// run it with Run.
type Fleet struct {
	cfg  Config
	log  *slog.Logger
	port *source.Listener
	disc *discovery

	mu       sync.Mutex
	targets  map[string]*Source
	watchers []Watcher
	errs     map[string]uint64
	sessions int
	// sessionSeq numbers the sessions (Session.ID: 1 for the first).
	sessionSeq uint64
	ctx        context.Context
	running    bool

	wg sync.WaitGroup // session goroutines

	// rejectedSeen is the diagnostic port's refusals already logged.
	rejectedSeen uint64
}

// New opens what the fleet needs before it runs (the diagnostic port, the
// socket directories' watch), so a bad configuration fails here, in one
// line. log receives the fleet's own messages (attaches, retries, exits).
func New(cfg Config, log *slog.Logger) (*Fleet, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	f := &Fleet{cfg: cfg, log: log, targets: make(map[string]*Source), errs: make(map[string]uint64)}
	if !cfg.NoAttach {
		disc, err := newDiscovery(f)
		if err != nil {
			return nil, err
		}
		f.disc = disc
	}
	if cfg.DiagnosticPort != "" {
		l, err := source.ListenAt(cfg.DiagnosticPort, cfg.PortMode)
		if err != nil {
			if f.disc != nil {
				f.disc.close()
			}
			return nil, err
		}
		f.port = l
	}
	return f, nil
}

// Static is an empty fleet that discovers nothing: its targets are the
// ones Add files (a stream its caller reads, Source.Follow).
func Static() *Fleet {
	return &Fleet{log: slog.New(slog.DiscardHandler), targets: make(map[string]*Source), errs: make(map[string]uint64)}
}

// Watch adds w to every session opened from now on.
func (f *Fleet) Watch(w Watcher) {
	f.mu.Lock()
	defer f.mu.Unlock()
	// A new array each time: a session keeps the slice it was given.
	f.watchers = append(slices.Clip(f.watchers), w)
}

// Target describes a target Add files: it is up and has no session until
// its caller follows one (Source.Follow).
type Target struct {
	Name string
	Pid  int
	// Listen: a runtime of the diagnostic port, running as Uid.
	Listen bool
	Uid    int
}

// Add files a target the fleet did not find (a stream its caller opened,
// a test's fake), up at once.
func (f *Fleet) Add(tg Target) *Source {
	t := &Source{f: f, kind: source.Attach, pid: tg.Pid, hostPid: tg.Pid, name: tg.Name, pidLabel: fmt.Sprint(tg.Pid), up: true, state: "running"}
	if tg.Listen {
		t.kind, t.hostPid, t.uid = source.Listen, 0, tg.Uid
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	t.order = nextOrder()
	t.key = fmt.Sprintf("added:%d", t.order)
	f.targets[t.key] = t
	return t
}

// DiagnosticPortEnv is the environment entry that makes a runtime connect
// to the fleet's diagnostic port ("" without one).
func (f *Fleet) DiagnosticPortEnv() string {
	if f.port == nil {
		return ""
	}
	return f.port.EnvVar()
}

// Run watches until ctx ends, then stops every session cleanly (each
// runtime writes its rundown; the targets run on) and returns. Sessions
// whose rundown does not end within 15 s are dropped.
func (f *Fleet) Run(ctx context.Context) error {
	f.mu.Lock()
	if f.running {
		f.mu.Unlock()
		return errors.New("fleet: Run called twice")
	}
	f.running, f.ctx = true, ctx
	f.mu.Unlock()
	var bg sync.WaitGroup
	if f.disc != nil {
		bg.Add(1)
		go func() { defer bg.Done(); f.disc.run(ctx) }()
	}
	if f.port != nil {
		bg.Add(1)
		go func() { defer bg.Done(); f.accept(ctx) }()
	}
	bg.Add(1)
	go func() { defer bg.Done(); f.sampleMemory(ctx) }()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			if f.port != nil {
				f.port.Close()
			}
			bg.Wait()
			if f.disc != nil {
				f.disc.close()
			}
			f.stopAll(15 * time.Second)
			return nil
		case <-tick.C:
			f.expire(time.Now())
			f.noteRejections()
		}
	}
}

// Go runs fn beside the sessions: Run waits for it before returning.
func (f *Fleet) Go(fn func()) {
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		fn()
	}()
}

// noteRejections logs, once per second at most, that the diagnostic port
// refused connections whose claimed pid or cookie the kernel contradicts,
// or past its caps on runtimes (clrspy_attach_errors_total counts each).
func (f *Fleet) noteRejections() {
	if f.port == nil {
		return
	}
	var n uint64
	rej := f.port.Rejected()
	for _, v := range rej {
		n += v
	}
	if n > f.rejectedSeen {
		f.log.Warn("refused runtime connections (an advertised identity the peer credentials contradict, or past the caps on runtimes)",
			"refused", n-f.rejectedSeen, "pid_mismatch", rej[ipc.RejectPid], "cookie_mismatch", rej[ipc.RejectCookie],
			"too_many_runtimes", rej[ipc.RejectTotal], "too_many_for_user", rej[ipc.RejectUser], "too_many_connections", rej[ipc.RejectBusy])
		f.rejectedSeen = n
	}
}

// stopAll waits for the sessions to end (their contexts are done), then
// drops the ones that did not within timeout.
func (f *Fleet) stopAll(timeout time.Duration) {
	done := make(chan struct{})
	go func() { f.wg.Wait(); close(done) }()
	select {
	case <-done:
		return
	case <-time.After(timeout):
	}
	f.mu.Lock()
	for _, t := range f.targets {
		if t.stream != nil {
			t.stream.Close()
		}
	}
	f.mu.Unlock()
	<-done
}

// expire drops the targets whose process ended more than Grace ago.
func (f *Fleet) expire(now time.Time) {
	var gone []*Session
	f.mu.Lock()
	for k, t := range f.targets {
		if !t.endedAt.IsZero() && now.Sub(t.endedAt) >= f.cfg.grace() {
			delete(f.targets, k)
			if t.sess != nil {
				gone = append(gone, t.sess)
			}
		}
	}
	f.mu.Unlock()
	for _, s := range gone {
		s.removed()
	}
}

// countError records a failed attach or session.
func (f *Fleet) countError(kind string) {
	f.mu.Lock()
	f.errs[kind]++
	f.mu.Unlock()
}

// errKind classifies an attach or session error for
// clrspy_attach_errors_total.
func errKind(err error) string {
	var ae *ipc.AttachError
	if errors.As(err, &ae) {
		return ae.Kind()
	}
	return "session"
}

// Health is the fleet's own state.
type Health struct {
	// Sessions open now.
	Sessions int
	// AttachErrors counts failed attaches and sessions by reason.
	AttachErrors map[string]uint64
	// CaptureErrors counts pause-triggered captures that failed or were
	// skipped, by reason (nil: captures are off).
	CaptureErrors map[string]uint64
}

// Health is the sessions open now and the failures counted.
func (f *Fleet) Health() Health {
	f.mu.Lock()
	defer f.mu.Unlock()
	h := Health{Sessions: f.sessions, AttachErrors: make(map[string]uint64, len(f.errs))}
	for k, v := range f.errs {
		h.AttachErrors[k] = v
	}
	if f.port != nil {
		for k, v := range f.port.Rejected() {
			h.AttachErrors[k] += v
		}
	}
	if f.cfg.CaptureErrors != nil {
		h.CaptureErrors = f.cfg.CaptureErrors()
	}
	return h
}

// Sources lists every target known now, in discovery order (all: also
// those that never had a session).
func (f *Fleet) Sources(all bool) []*Source {
	f.mu.Lock()
	ts := make([]*Source, 0, len(f.targets))
	for _, t := range f.targets {
		if all || t.sess != nil {
			ts = append(ts, t)
		}
	}
	f.mu.Unlock()
	sort.Slice(ts, func(i, j int) bool { return ts[i].order < ts[j].order })
	return ts
}

// Sessions lists every target's latest session, in the order the
// sessions began.
func (f *Fleet) Sessions() []*Session {
	f.mu.Lock()
	out := make([]*Session, 0, len(f.targets))
	for _, t := range f.targets {
		if t.sess != nil {
			out = append(out, t.sess)
		}
	}
	f.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].order < out[j].order })
	return out
}

// Session finds a target's latest session by its id (nil: none).
func (f *Fleet) Session(id string) *Session {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, t := range f.targets {
		if t.sess != nil && t.sess.id == id {
			return t.sess
		}
	}
	return nil
}

// Lookup finds a target by its pid label (the newest when two share it).
func (f *Fleet) Lookup(pid string) *Source {
	f.mu.Lock()
	defer f.mu.Unlock()
	var found *Source
	for _, t := range f.targets {
		if t.pidLabel == pid && (found == nil || t.order > found.order) {
			found = t
		}
	}
	return found
}

// pidLabelFree reports whether no target alive uses label (f.mu held).
func (f *Fleet) pidLabelFree(label string) bool {
	for _, t := range f.targets {
		if t.pidLabel == label {
			return false
		}
	}
	return true
}

// matches applies --pid and --name to a process (name: its name for
// --name; nameOf is asked when names are given and name does not match).
func (f *Fleet) matches(pids []int, name string, nameOf func(string) bool) bool {
	if len(f.cfg.Pids) == 0 && len(f.cfg.Names) == 0 {
		return true
	}
	for _, p := range f.cfg.Pids {
		for _, q := range pids {
			if p == q && q > 0 {
				return true
			}
		}
	}
	for _, n := range f.cfg.Names {
		if n == name || (nameOf != nil && nameOf(n)) {
			return true
		}
	}
	return false
}

var orderSeq struct {
	sync.Mutex
	n uint64
}

func nextOrder() uint64 {
	orderSeq.Lock()
	defer orderSeq.Unlock()
	orderSeq.n++
	return orderSeq.n
}

func isUnknownCommand(err error) bool {
	return err != nil && strings.Contains(err.Error(), "this runtime cannot run the session")
}

// ErrLine is an error for a log line that names the pid already.
func ErrLine(err error) string {
	var ae *ipc.AttachError
	if errors.As(err, &ae) {
		return ae.Reason
	}
	msg := fmt.Sprint(err)
	if rest, ok := strings.CutPrefix(msg, "pid "); ok {
		if i := strings.Index(rest, ": "); i > 0 && strings.Trim(rest[:i], "0123456789") == "" {
			return rest[i+2:]
		}
	}
	return msg
}

// Options is the monitor options of every session the fleet opens (the
// analyses serve exports): locks with their owners and object types,
// the thread pool, requests, exceptions when asked, counters.
func (f *Fleet) options(t *Source, objectTypes func([]uint64) (map[uint64]string, string)) monitor.Options {
	opts := monitor.Options{Locks: true, Exceptions: f.cfg.Exceptions, ThreadPool: true, Requests: true, ObjectTypes: objectTypes}
	opts.Counters.Interval = f.cfg.counterInterval()
	opts.Counters.Meter = t.meterSafe()
	return opts
}

// TargetInfo is one target as serve's /targets lists it.
type TargetInfo struct {
	// Pid is the process id (listen mode: the pid the runtime advertised,
	// its pid in its own namespace), a number as host_pid is.
	Pid int `json:"pid"`
	// HostPid is the pid in clrspy's namespace (0: not visible there).
	HostPid int `json:"host_pid"`
	// Uid is the user a listen-mode runtime runs as, from its
	// connection's peer credentials (nil in attach mode).
	Uid     *int   `json:"uid,omitempty"`
	Process string `json:"process"`
	Kind    string `json:"kind"` // attach or listen
	// State: attaching, running, retrying, exited, failed.
	State string `json:"state"`
	Error string `json:"error,omitempty"`
	// EndedUTC is when the session ended for good (the target goes
	// Grace after it).
	EndedUTC *time.Time `json:"ended_utc,omitempty"`
	// Sessions is the sessions open on the process now (0 or 1: what it
	// adds to clrspy_sessions); SessionsOpened counts every session opened
	// on it, retries included.
	Sessions       int `json:"sessions"`
	SessionsOpened int `json:"sessions_opened"`
	// Owner is the process's uid (-1: unknown; Source.Owner).
	Owner int `json:"-"`
}

// List describes every target known now, in discovery order.
func (f *Fleet) List() []TargetInfo {
	ts := f.Sources(true)
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]TargetInfo, 0, len(ts))
	for _, t := range ts {
		ti := TargetInfo{Pid: t.pid, HostPid: t.hostPid, Process: t.name, Kind: t.kind.String(), State: t.state,
			Error: t.lastErr, SessionsOpened: t.opened, Owner: t.Owner()}
		if t.up {
			ti.Sessions = 1
		}
		if t.kind == source.Listen {
			uid := t.uid
			ti.Uid = &uid
		}
		if !t.endedAt.IsZero() {
			e := t.endedAt.UTC()
			ti.EndedUTC = &e
		}
		out = append(out, ti)
	}
	return out
}
