package report

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/clrspy/clrspy/gcpause"
)

// PauseLogOptions configure a PauseLog.
type PauseLogOptions struct {
	// Pauses from Info are logged at Info level, from Warn at Warn level,
	// shorter ones at Debug.
	Info, Warn time.Duration
	// SlowSuspend flags suspensions (time to stop threads) longer than it.
	SlowSuspend time.Duration
	// Level is the lowest level printed.
	Level slog.Level
	// JSON writes JSON lines instead of human lines.
	JSON bool
	// Color colors human lines (a terminal).
	Color bool
	// Attrs are added to every line (serve: pid and process).
	Attrs []slog.Attr
	// RequestsFrozen, when set, is how many requests a GC's pause froze
	// (ok false: no request events): the line's requests_frozen.
	RequestsFrozen func(g *gcpause.GC) (n int64, ok bool)
}

// ParseLevel reads a --level value: debug, info, warn or none.
func ParseLevel(s string) (slog.Level, error) {
	switch strings.ToLower(s) {
	case "debug":
		return slog.LevelDebug, nil
	case "info":
		return slog.LevelInfo, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "none", "off", "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("unknown --level %q: use debug, info, warn or none", s)
}

// Severity is the level of a pause of the given length.
func (o *PauseLogOptions) Severity(pauseNanos int64) slog.Level {
	switch {
	case pauseNanos >= int64(o.Warn):
		return slog.LevelWarn
	case pauseNanos >= int64(o.Info):
		return slog.LevelInfo
	}
	return slog.LevelDebug
}

// PauseLog is the live, severity-leveled log of pauses that `clrspy gc`
// prints while a session runs and `clrspy serve` keeps for every target:
// one line per GC pause and per non-GC suspension.
type PauseLog struct {
	o   PauseLogOptions
	log *slog.Logger
}

// NewPauseLog logs to w.
func NewPauseLog(w io.Writer, o PauseLogOptions) *PauseLog {
	var h slog.Handler
	if o.JSON {
		h = slog.NewJSONHandler(w, &slog.HandlerOptions{Level: o.Level})
	} else {
		h = &humanHandler{mu: new(sync.Mutex), w: w, level: o.Level, color: o.Color}
	}
	if len(o.Attrs) > 0 {
		h = h.WithAttrs(o.Attrs)
	}
	return &PauseLog{o: o, log: slog.New(h)}
}

// Logger is the underlying logger (for other lines in the same style).
func (l *PauseLog) Logger() *slog.Logger { return l.log }

func msAttr(key string, n int64) slog.Attr {
	return slog.Float64(key, float64(n/1000)/1000)
}

// GC logs a finished GC (gcpause.Options.OnGC).
func (l *PauseLog) GC(g *gcpause.GC) {
	if !g.Complete {
		l.log.Warn("GC incomplete (events missing)", "gc", g.Number, "gen", g.Generation, "type", g.Type.String())
		return
	}
	lvl := l.o.Severity(g.PauseNanos)
	if !l.log.Enabled(context.Background(), lvl) {
		return
	}
	attrs := []slog.Attr{
		slog.Int("gc", int(g.Number)),
		slog.Int("gen", g.Generation),
		slog.String("type", g.Type.String()),
		slog.String("reason", g.Reason.String()),
		msAttr("pause_ms", g.PauseNanos),
		msAttr("suspend_ms", g.SuspendNanos),
		slog.Time("start", g.PauseStartUTC),
	}
	switch {
	case g.HeapDump:
		// A heap snapshot's own GC: the tool's, not the application's
		// GC.Collect.
		attrs = append(attrs, slog.Bool("heap_snapshot", true))
	case g.Induced:
		attrs = append(attrs, slog.Bool("induced", true))
	}
	if g.Pauses > 1 {
		attrs = append(attrs, slog.Int("pauses", g.Pauses))
	}
	if v := g.HeapSizeAfterMB(); v >= 0 {
		attrs = append(attrs, slog.Float64("after_mb", float64(int64(v*10))/10))
	}
	if g.SuspendNanos > int64(l.o.SlowSuspend) {
		attrs = append(attrs, slog.Bool("slow_suspend", true))
	}
	if l.o.RequestsFrozen != nil {
		if n, ok := l.o.RequestsFrozen(g); ok {
			attrs = append(attrs, slog.Int64("requests_frozen", n))
		}
	}
	l.log.LogAttrs(context.Background(), lvl, "GC pause", attrs...)
}

// Suspension logs a runtime suspension that was not a GC's
// (gcpause.Options.OnSuspension).
func (l *PauseLog) Suspension(p *gcpause.Suspension) {
	lvl := l.o.Severity(p.PauseNanos)
	if !l.log.Enabled(context.Background(), lvl) {
		return
	}
	attrs := []slog.Attr{
		slog.String("reason", p.Reason.String()),
		msAttr("pause_ms", p.PauseNanos),
		slog.Time("start", p.StartUTC),
		slog.Uint64("thread", p.ThreadID),
	}
	if p.SuspendNanos >= 0 {
		attrs = append(attrs, msAttr("suspend_ms", p.SuspendNanos))
		if p.SuspendNanos > int64(l.o.SlowSuspend) {
			attrs = append(attrs, slog.Bool("slow_suspend", true))
		}
	}
	if p.Incomplete {
		attrs = append(attrs, slog.Bool("incomplete", true))
	}
	l.log.LogAttrs(context.Background(), lvl, "runtime suspension (not a GC)", attrs...)
}

// humanHandler prints "15:04:05.000 WARN  GC pause gc=12 gen=2 ...".
type humanHandler struct {
	mu    *sync.Mutex
	w     io.Writer
	level slog.Level
	color bool
	attrs []slog.Attr
}

func (h *humanHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }
func (h *humanHandler) WithGroup(string) slog.Handler                { return h }

func (h *humanHandler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append(append([]slog.Attr(nil), h.attrs...), as...)
	return &c
}

func (h *humanHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	lvl := r.Level.String()
	if h.color {
		switch {
		case r.Level >= slog.LevelWarn:
			lvl = "\033[1;31m" + lvl + "\033[0m"
		case r.Level >= slog.LevelInfo:
			lvl = "\033[33m" + lvl + "\033[0m"
		default:
			lvl = "\033[2m" + lvl + "\033[0m"
		}
	}
	var start time.Time
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "start" {
			start = a.Value.Time()
		}
		return true
	})
	if start.IsZero() {
		start = r.Time
	}
	fmt.Fprintf(&b, "%s %-5s %s", start.UTC().Format("15:04:05.000"), lvl, r.Message)
	for _, a := range h.attrs {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
	}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key != "start" {
			fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		}
		return true
	})
	b.WriteByte('\n')
	if h.mu != nil {
		h.mu.Lock()
		defer h.mu.Unlock()
	}
	_, err := io.WriteString(h.w, b.String())
	return err
}
