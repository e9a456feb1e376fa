package serve

import (
	"context"
	"log/slog"
	"time"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/internal/fleet"
	"github.com/clrspy/clrspy/internal/monitor"
	"github.com/clrspy/clrspy/internal/procfs"
	"github.com/clrspy/clrspy/perf"
	"github.com/clrspy/clrspy/report"
)

// prepare adds serve's hooks to a session's monitor: the pause log, the
// pause-triggered capture (run beside the monitor) and the leak watch.
func (d *Daemon) prepare(s *fleet.Session, opts *monitor.Options) []analysis.Analyzer {
	t := d.target(s.Source())
	ctx := s.Context()
	var plog *report.PauseLog
	if d.cfg.PauseLog != nil {
		o := *d.cfg.PauseLog
		o.Attrs = append(append([]slog.Attr(nil), o.Attrs...), slog.String("pid", t.PidLabel()), slog.String("process", t.Name()))
		// Each line says how many requests the pause froze (OnGC runs on
		// the goroutine that feeds the monitor, once it is made).
		o.RequestsFrozen = func(g *gcpause.GC) (int64, bool) { return s.Monitor().RequestsFrozen(g) }
		plog = report.NewPauseLog(d.out, o)
	}
	var also []analysis.Analyzer
	trig := d.caps.trigger(s.Header(), t, d.log)
	if trig != nil {
		also = append(also, trig)
		opts.OnGCStart = trig.GCStart // before the trigger records the GCStart
	}
	opts.OnGC = func(g *gcpause.GC) {
		if plog != nil {
			// A heap snapshot's GC is logged as the snapshot's, not the
			// application's induced GC: the snapshot session's gcpause
			// marked it (HeapDump, recorded by HeapDumped before the
			// snapshot's slot is released), or, when this session sees it
			// first, it is an induced gen2 GC while the slot is held.
			lg := g
			if g.Induced && g.Generation == 2 && (t.snapshotting.busy.Load() || t.IsHeapDump(g.Number)) {
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
	return also
}

// beside runs beside every session until ctx ends (the session's end):
// the CPU profile windows of Config.CPUProfile.
func (d *Daemon) beside(ctx context.Context, s *fleet.Session) {
	if d.cfg.CPUProfile.On {
		d.target(s.Source()).cpuProfiles(ctx, s)
	}
}

// cpuProfiles profiles the target with the perf sampler, one window after
// the other, until ctx ends (the session's end), and gives each window's
// profile to the live web view. Where perf may not sample the process it
// says why once and stops.
func (t *target) cpuProfiles(ctx context.Context, s *fleet.Session) {
	d := t.d
	pid := t.HostPid()
	if pid <= 0 {
		d.log.Warn("no CPU profile: the perf sampler needs the process in clrspy's pid namespace", "pid", t.PidLabel(), "process", t.Name())
		return
	}
	opts := perf.Options{Hz: d.cfg.CPUProfile.Hz}
	if _, err := perf.Check(pid, opts); err != nil {
		d.log.Warn("no CPU profile", "pid", t.PidLabel(), "process", t.Name(), "err", err)
		return
	}
	for ctx.Err() == nil {
		p, err := t.perfProfile(ctx, opts, d.cfg.cpuWindow())
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			if !procfs.Exists(pid) {
				return // the process exited: the session ends too
			}
			d.log.Warn("CPU profile", "pid", t.PidLabel(), "process", t.Name(), "err", err)
			if !fleet.Sleep(ctx, d.cfg.cpuWindow()) {
				return
			}
			continue
		}
		if d.live != nil && p.Total > 0 {
			d.live.SetCPU(s, report.LabelCPU, p)
		}
	}
}
