package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/clrspy/clrspy/internal/metrics"
	"github.com/clrspy/clrspy/internal/procfs"
	"github.com/clrspy/clrspy/ipc"
	"github.com/clrspy/clrspy/report"
	"github.com/clrspy/clrspy/source"
)

// Daemon watches .NET processes. Create it with New, run it with Run; it
// is a metrics.Source.
type Daemon struct {
	cfg  Config
	log  *slog.Logger
	out  io.Writer // LogOutput, serialised
	port *source.Listener
	disc *discovery
	caps *captures

	mu       sync.Mutex
	targets  map[string]*target
	errs     map[string]uint64
	sessions int
	ctx      context.Context
	running  bool

	wg sync.WaitGroup // session goroutines

	// rejectedSeen is the diagnostic port's refusals already logged.
	rejectedSeen uint64
}

// New validates cfg and opens what the daemon needs before it runs (the
// diagnostic port, the socket directories' watch), so a bad configuration
// fails here, in one line.
func New(cfg Config) (*Daemon, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	cfg.Capture.defaults()
	d := &Daemon{cfg: cfg, targets: make(map[string]*target), errs: make(map[string]uint64)}
	w := cfg.LogOutput
	if w == nil {
		w = os.Stderr
	}
	d.out = &lockedWriter{w: w}
	d.log = cfg.Logger
	if d.log == nil {
		o := report.PauseLogOptions{Level: slog.LevelInfo}
		if cfg.PauseLog != nil {
			o.Level, o.JSON = cfg.PauseLog.Level, cfg.PauseLog.JSON
		}
		d.log = report.NewPauseLog(d.out, o).Logger()
	}
	if cfg.Capture.Over > 0 {
		d.caps = &captures{cfg: d.cfg.Capture, log: d.log, errs: make(map[string]uint64)}
	}
	if !cfg.NoAttach {
		disc, err := newDiscovery(d)
		if err != nil {
			return nil, err
		}
		d.disc = disc
	}
	if cfg.DiagnosticPort != "" {
		l, err := source.ListenAt(cfg.DiagnosticPort, cfg.PortMode)
		if err != nil {
			if d.disc != nil {
				d.disc.close()
			}
			return nil, err
		}
		d.port = l
	}
	return d, nil
}

// DiagnosticPortEnv is the environment entry that makes a runtime connect
// to the daemon's diagnostic port ("" without one).
func (d *Daemon) DiagnosticPortEnv() string {
	if d.port == nil {
		return ""
	}
	return d.port.EnvVar()
}

// Run watches until ctx ends, then stops every session cleanly (each
// runtime writes its rundown; the targets run on) and returns. Sessions
// whose rundown does not end within 15 s are dropped.
func (d *Daemon) Run(ctx context.Context) error {
	d.mu.Lock()
	if d.running {
		d.mu.Unlock()
		return errors.New("serve: Run called twice")
	}
	d.running, d.ctx = true, ctx
	d.mu.Unlock()
	var bg sync.WaitGroup
	if d.disc != nil {
		bg.Add(1)
		go func() { defer bg.Done(); d.disc.run(ctx) }()
	}
	if d.port != nil {
		bg.Add(1)
		go func() { defer bg.Done(); d.accept(ctx) }()
	}
	bg.Add(1)
	go func() { defer bg.Done(); d.sampleMemory(ctx) }()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			if d.port != nil {
				d.port.Close()
			}
			bg.Wait()
			if d.disc != nil {
				d.disc.close()
			}
			d.stopAll(15 * time.Second)
			return nil
		case <-tick.C:
			d.expire(time.Now())
			d.noteRejections()
		}
	}
}

// noteRejections logs, once per second at most, that the diagnostic port
// refused connections whose claimed pid or cookie the kernel contradicts,
// or past its caps on runtimes (clrspy_attach_errors_total counts each).
func (d *Daemon) noteRejections() {
	if d.port == nil {
		return
	}
	var n uint64
	rej := d.port.Rejected()
	for _, v := range rej {
		n += v
	}
	if n > d.rejectedSeen {
		d.log.Warn("refused runtime connections (an advertised identity the peer credentials contradict, or past the caps on runtimes)",
			"refused", n-d.rejectedSeen, "pid_mismatch", rej[ipc.RejectPid], "cookie_mismatch", rej[ipc.RejectCookie],
			"too_many_runtimes", rej[ipc.RejectTotal], "too_many_for_user", rej[ipc.RejectUser], "too_many_connections", rej[ipc.RejectBusy])
		d.rejectedSeen = n
	}
}

// stopAll waits for the sessions to end (their contexts are done), then
// drops the ones that did not within timeout.
func (d *Daemon) stopAll(timeout time.Duration) {
	done := make(chan struct{})
	go func() { d.wg.Wait(); close(done) }()
	select {
	case <-done:
		return
	case <-time.After(timeout):
	}
	d.mu.Lock()
	for _, t := range d.targets {
		if t.stream != nil {
			t.stream.Close()
		}
	}
	d.mu.Unlock()
	<-done
}

// expire drops the targets whose process ended more than Grace ago.
func (d *Daemon) expire(now time.Time) {
	var gone []string
	d.mu.Lock()
	for k, t := range d.targets {
		if !t.endedAt.IsZero() && now.Sub(t.endedAt) >= d.cfg.grace() {
			delete(d.targets, k)
			if t.sessID != "" {
				gone = append(gone, t.sessID)
			}
		}
	}
	d.mu.Unlock()
	if d.cfg.Sessions != nil {
		for _, id := range gone {
			d.cfg.Sessions.Remove(id)
		}
	}
}

// countError records a failed attach or session.
func (d *Daemon) countError(kind string) {
	d.mu.Lock()
	d.errs[kind]++
	d.mu.Unlock()
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

// Targets implements metrics.Source: every target that had a session.
func (d *Daemon) Targets() []metrics.Target {
	d.mu.Lock()
	ts := make([]*target, 0, len(d.targets))
	for _, t := range d.targets {
		if t.mon != nil {
			ts = append(ts, t)
		}
	}
	d.mu.Unlock()
	sort.Slice(ts, func(i, j int) bool { return ts[i].order < ts[j].order })
	out := make([]metrics.Target, 0, len(ts))
	for _, t := range ts {
		d.mu.Lock()
		mon, hist, up, dumps := t.mon, t.hist, t.up, slices.Clone(t.dumpGCs)
		d.mu.Unlock()
		snap := mon.Snapshot()
		// The latest event's time is the runtime's clock (the session's
		// sync time plus its timestamps), the same host clock as ours.
		threads := 0
		if pid := t.procPid(); up && pid > 0 {
			if ths, err := procfs.Threads(pid); err == nil {
				threads = len(ths)
			}
		}
		mt := metrics.Target{Pid: t.pidLabel, Process: t.name, Up: up, Snapshot: snap, GC: hist,
			LastEventAge: time.Since(snap.Time), HeapGrowth: t.heapGrowth(), Threads: threads, HeapDumpGCs: dumps}
		if up {
			mt.Memory, mt.Cgroup = t.mem.get()
			mt.Cores = runtime.NumCPU()
			mt.CPUDemandPct = t.mem.demandPct(mt.Cores)
		}
		out = append(out, mt)
	}
	return out
}

// Health implements metrics.Source.
func (d *Daemon) Health() metrics.Health {
	d.mu.Lock()
	defer d.mu.Unlock()
	h := metrics.Health{Sessions: d.sessions, AttachErrors: make(map[string]uint64, len(d.errs))}
	for k, v := range d.errs {
		h.AttachErrors[k] = v
	}
	if d.port != nil {
		for k, v := range d.port.Rejected() {
			h.AttachErrors[k] += v
		}
	}
	h.CaptureErrors = d.caps.errors()
	return h
}

// TargetInfo is one target as /targets lists it.
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
	// EndedUTC is when the session ended for good (the series go Grace
	// after it).
	EndedUTC *time.Time `json:"ended_utc,omitempty"`
	// Sessions is the sessions open on the process now (0 or 1: what it
	// adds to clrspy_sessions); SessionsOpened counts every session opened
	// on it, retries included.
	Sessions       int `json:"sessions"`
	SessionsOpened int `json:"sessions_opened"`
	owner          int // the process's uid (-1: unknown)
}

// List describes every target known now, in discovery order.
func (d *Daemon) List() []TargetInfo {
	d.mu.Lock()
	defer d.mu.Unlock()
	ts := make([]*target, 0, len(d.targets))
	for _, t := range d.targets {
		ts = append(ts, t)
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].order < ts[j].order })
	out := make([]TargetInfo, 0, len(ts))
	for _, t := range ts {
		ti := TargetInfo{Pid: t.pid, HostPid: t.hostPid, Process: t.name, Kind: t.kind.String(), State: t.state,
			Error: t.lastErr, SessionsOpened: t.opened, owner: t.owner()}
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

// lookup finds a target by its pid label.
func (d *Daemon) lookup(pid string) *target {
	d.mu.Lock()
	defer d.mu.Unlock()
	var found *target
	for _, t := range d.targets {
		if t.pidLabel == pid && (found == nil || t.order > found.order) {
			found = t
		}
	}
	return found
}

// pidLabelFree reports whether no target alive uses label (d.mu held).
func (d *Daemon) pidLabelFree(label string) bool {
	for _, t := range d.targets {
		if t.pidLabel == label {
			return false
		}
	}
	return true
}

// matches applies --pid and --name to a process (name: its name for
// --name; nameOf is asked when names are given and name does not match).
func (d *Daemon) matches(pids []int, name string, nameOf func(string) bool) bool {
	if len(d.cfg.Pids) == 0 && len(d.cfg.Names) == 0 {
		return true
	}
	for _, p := range d.cfg.Pids {
		for _, q := range pids {
			if p == q && q > 0 {
				return true
			}
		}
	}
	for _, n := range d.cfg.Names {
		if n == name || (nameOf != nil && nameOf(n)) {
			return true
		}
	}
	return false
}

// lockedWriter serialises writes from many targets' logs.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
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

func itoa(i int) string { return strconv.Itoa(i) }

// errLine is an error for a log line that names the pid already.
func errLine(err error) string {
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
