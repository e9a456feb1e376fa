package serve

import (
	"context"
	"io"
	"log/slog"
	"os"
	"sync"

	"github.com/clrspy/clrspy/internal/fleet"
	"github.com/clrspy/clrspy/internal/metrics"
	"github.com/clrspy/clrspy/internal/web"
	"github.com/clrspy/clrspy/report"
)

// Daemon watches .NET processes: a fleet (package fleet: discovery,
// attach, retry, one Source per target) and what serve adds on each
// target's sessions (the pause log, pause-triggered captures, the leak
// watch, the CPU profile windows, the live web view). Create it with New,
// run it with Run.
type Daemon struct {
	cfg   Config
	log   *slog.Logger
	out   io.Writer // LogOutput, serialised
	caps  *captures
	fleet *fleet.Fleet
	live  *web.Monitors // Config.Web
}

// New validates cfg and opens what the daemon needs before it runs (the
// diagnostic port, the socket directories' watch), so a bad configuration
// fails here, in one line.
func New(cfg Config) (*Daemon, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	cfg.Capture.defaults()
	d := &Daemon{cfg: cfg}
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
	fc := cfg.Config
	if cfg.Capture.Over > 0 {
		d.caps = &captures{cfg: d.cfg.Capture, log: d.log, errs: make(map[string]uint64)}
		fc.CaptureErrors = d.caps.errors
	}
	f, err := fleet.New(fc, d.log)
	if err != nil {
		return nil, err
	}
	d.fleet = f
	f.Watch(fleet.Watcher{Prepare: d.prepare, Run: d.beside})
	metrics.WatchGC(f)
	if cfg.Web {
		// The page's timeline shows a minute; 10,000 rows per process
		// is that at over 150 GCs a second, and bounds serve's memory.
		d.live = web.NewMonitors(f, web.MonitorsOptions{MaxRows: 10_000})
	}
	return d, nil
}

// Fleet is the daemon's targets (what metrics export).
func (d *Daemon) Fleet() *fleet.Fleet { return d.fleet }

// DiagnosticPortEnv is the environment entry that makes a runtime connect
// to the daemon's diagnostic port ("" without one).
func (d *Daemon) DiagnosticPortEnv() string { return d.fleet.DiagnosticPortEnv() }

// Run watches until ctx ends, then stops every session cleanly (each
// runtime writes its rundown; the targets run on) and returns. Sessions
// whose rundown does not end within 15 s are dropped.
func (d *Daemon) Run(ctx context.Context) error {
	err := d.fleet.Run(ctx)
	if d.live != nil {
		d.live.Close()
	}
	return err
}

// TargetInfo is one target as /targets lists it.
type TargetInfo = fleet.TargetInfo

// List describes every target known now, in discovery order.
func (d *Daemon) List() []TargetInfo { return d.fleet.List() }

// target is serve's state of one target, kept in its fleet.Source.
type target struct {
	*fleet.Source
	d *Daemon

	profiling slot
	// stacking holds the one /debug/stacks snapshot at a time.
	stacking slot
	// snapshotting holds the one heap snapshot at a time
	// (/debug/pprof/heap).
	snapshotting slot
	// typeNames are the type names of the target's snapshots so far, by
	// TypeID (used and replaced by the slot's holder).
	typeNames map[uint64]string
	// watch is Config.SnapshotOnGen2Growth's state.
	watch heapWatch
}

type targetKey struct{}

// target is serve's state of src.
func (d *Daemon) target(src *fleet.Source) *target {
	return src.Init(targetKey{}, func() any { return &target{Source: src, d: d} }).(*target)
}

// lookup finds a target by its pid label (nil: none).
func (d *Daemon) lookup(pid string) *target {
	src := d.fleet.Lookup(pid)
	if src == nil {
		return nil
	}
	return d.target(src)
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
