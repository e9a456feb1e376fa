package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/ipc"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/report"
)

func init() { commands = append(commands, newGCCmd) }

// gcOptions are the flags of clrspy gc.
type gcOptions struct {
	info, warn  time.Duration
	slowSuspend time.Duration
	level       string
	logJSON     bool
	asJSON      bool
	asCSV       bool
	out         string
	sample      bool
	failOver    time.Duration
	trigger     triggerOptions
}

// gcProviders: GC events at informational level; the sample profiler too
// with --sample.
func gcProviders(sample bool) []ipc.Provider {
	p := []ipc.Provider{{Name: nettrace.ProviderRuntime, Keywords: ipc.KeywordGC, Level: ipc.LevelInformational}}
	if sample {
		p = append(p, ipc.Provider{Name: nettrace.ProviderSampleProfiler, Keywords: ipc.SampleProfilerKeywords, Level: ipc.LevelInformational})
	}
	return p
}

func newGCCmd() *cobra.Command {
	o := &gcOptions{}
	c := &cobra.Command{
		Use:   "gc [FILE|-] [--pid N | --name NAME | -- COMMAND ARGS...]",
		Short: "Every GC pause and runtime suspension: when, how long, which generation, why",
		Long: `gc follows the runtime's suspension and GC events and reports each pause:
when it started, how long threads took to stop (suspend), how long they stayed
stopped (pause), the generation, type and reason of the GC, and the heap sizes
the events carry. Suspensions that are not GCs (debugger, profiler, shutdown,
ReJIT, the sample profiler's ~1 ms stops) are accounted by reason and never
counted as GC pauses.

While the session runs, each pause is logged on stderr: Debug below --info,
Info below --warn, Warn at or above it; --level picks what is printed. At the
end (Ctrl-C, target exit, --duration, end of file) the rollup by generation,
a pause histogram, the longest pauses and suspensions by reason go to stdout
(or -o FILE): as text, --json, or --csv (one row per GC, PerfView's columns).

Pauses follow PerfView's GCStats rules: pause = SuspendEEBegin to RestartEEEnd,
suspend = SuspendEEBegin to SuspendEEEnd; a background GC's pause is the sum
of its short stops; a GC is complete once its heap statistics arrived.`,
		Example: `  clrspy gc app.nettrace
  clrspy gc --pid 1234 --duration 1m --warn 50ms
  clrspy gc --json -o gc.json -- dotnet app.dll
  clrspy gc --fail-on-pause-over 200ms -- dotnet test.dll   # exit 3 on a long pause`,
	}
	t := addTargetFlags(c)
	f := c.Flags()
	f.DurationVar(&o.info, "info", 10*time.Millisecond, "pauses from this long are logged at Info level (shorter: Debug)")
	f.DurationVar(&o.warn, "warn", 100*time.Millisecond, "pauses from this long are logged at Warn level")
	f.DurationVar(&o.slowSuspend, "slow-suspend", 5*time.Millisecond, "flag suspensions (time to stop threads) longer than this")
	f.StringVar(&o.level, "level", "info", "live log level: debug, info, warn or none")
	f.BoolVar(&o.logJSON, "log-json", false, "live log as JSON lines")
	f.BoolVar(&o.asJSON, "json", false, "report as one JSON document")
	f.BoolVar(&o.asCSV, "csv", false, "report as CSV, one row per GC (PerfView's columns)")
	f.StringVarP(&o.out, "output", "o", "", "write the report to this file instead of stdout")
	f.BoolVar(&o.sample, "sample", false, "also run the sample profiler in a live session (its suspensions are accounted separately)")
	f.DurationVar(&o.failOver, "fail-on-pause-over", 0, "exit with status 3 when any GC pause is longer than this")
	for _, h := range gcFlagHooks {
		h(c, o)
	}
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if o.asJSON && o.asCSV {
			return fmt.Errorf("--json and --csv contradict each other: pick one")
		}
		if o.info > o.warn {
			return fmt.Errorf("--info (%v) must not be longer than --warn (%v)", o.info, o.warn)
		}
		if _, err := parseLevel(o.level); err != nil {
			return err
		}
		live := cmd.ArgsLenAtDash() >= 0 || t.pid != 0 || t.name != ""
		if err := o.trigger.check(live); err != nil {
			return err
		}
		return runGC(cmd, t, args, o)
	}
	return c
}

// liveRowsKept is how many GC and suspension rows a live session keeps
// for the report (the most recent).
const liveRowsKept = 2000

// gcFlagHooks let other files add flags to clrspy gc (the record trigger).
var gcFlagHooks []func(*cobra.Command, *gcOptions)

func parseLevel(s string) (slog.Level, error) {
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

// gcSession is one run of the analysis with its live logger.
type gcSession struct {
	o       *gcOptions
	log     *slog.Logger
	a       *gcpause.Analyzer
	overMax *gcpause.GC // the first pause over --fail-on-pause-over
	trig    *pauseTrigger
}

func (s *gcSession) level(pause int64) slog.Level {
	switch {
	case pause >= int64(s.o.warn):
		return slog.LevelWarn
	case pause >= int64(s.o.info):
		return slog.LevelInfo
	}
	return slog.LevelDebug
}

func msAttr(key string, n int64) slog.Attr {
	return slog.Float64(key, float64(n/1000)/1000)
}

func (s *gcSession) onGC(g *gcpause.GC) {
	if s.trig != nil {
		s.trig.gc(g)
	}
	if !g.Complete {
		s.log.Warn("GC incomplete (events missing)", "gc", g.Number, "gen", g.Generation, "type", g.Type.String())
		return
	}
	if s.o.failOver > 0 && g.PauseNanos > int64(s.o.failOver) && s.overMax == nil {
		s.overMax = g
	}
	lvl := s.level(g.PauseNanos)
	if !s.log.Enabled(context.Background(), lvl) {
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
	if g.Induced {
		attrs = append(attrs, slog.Bool("induced", true))
	}
	if g.Pauses > 1 {
		attrs = append(attrs, slog.Int("pauses", g.Pauses))
	}
	if v := g.HeapSizeAfterMB(); v >= 0 {
		attrs = append(attrs, slog.Float64("after_mb", float64(int64(v*10))/10))
	}
	if g.SuspendNanos > int64(s.o.slowSuspend) {
		attrs = append(attrs, slog.Bool("slow_suspend", true))
	}
	s.log.LogAttrs(context.Background(), lvl, "GC pause", attrs...)
}

func (s *gcSession) onSuspension(p *gcpause.Suspension) {
	lvl := s.level(p.PauseNanos)
	if !s.log.Enabled(context.Background(), lvl) {
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
		if p.SuspendNanos > int64(s.o.slowSuspend) {
			attrs = append(attrs, slog.Bool("slow_suspend", true))
		}
	}
	if p.Incomplete {
		attrs = append(attrs, slog.Bool("incomplete", true))
	}
	s.log.LogAttrs(context.Background(), lvl, "runtime suspension (not a GC)", attrs...)
}

// newGCLogger builds the live logger on w: JSON lines, or human lines
// (colored on a terminal).
func newGCLogger(w io.Writer, o *gcOptions) *slog.Logger {
	lvl, _ := parseLevel(o.level)
	if o.logJSON {
		return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: lvl}))
	}
	color := false
	if f, ok := w.(*os.File); ok {
		color = term.IsTerminal(int(f.Fd())) && os.Getenv("NO_COLOR") == ""
	}
	return slog.New(&humanHandler{w: w, level: lvl, color: color})
}

// humanHandler prints "15:04:05.000 WARN  GC pause gc=12 gen=2 ...".
type humanHandler struct {
	mu    sync.Mutex
	w     io.Writer
	level slog.Level
	color bool
}

func (h *humanHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }
func (h *humanHandler) WithAttrs([]slog.Attr) slog.Handler           { return h }
func (h *humanHandler) WithGroup(string) slog.Handler                { return h }

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
	r.Attrs(func(a slog.Attr) bool {
		if a.Key != "start" {
			fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		}
		return true
	})
	b.WriteByte('\n')
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.w, b.String())
	return err
}

func runGC(cmd *cobra.Command, t *target, args []string, o *gcOptions) error {
	st, err := t.open(cmd, args, gcProviders(o.sample))
	if err != nil {
		return err
	}
	s := &gcSession{o: o, log: newGCLogger(os.Stderr, o)}
	res, endErr := s.analyze(st)
	cerr := st.Close()
	if res == nil {
		return endErr
	}
	w, closeOut, err := openOutput(cmd, o.out)
	if err != nil {
		return err
	}
	src := report.GCSource{Name: st.Name, Live: st.Live}
	switch {
	case o.asJSON:
		err = report.WriteGCJSON(w, src, res)
	case o.asCSV:
		err = report.WriteGCCSV(w, res)
	default:
		err = report.WriteGCText(w, src, res)
	}
	err = closeOut(err)
	if err := st.finish(err, endErr, cerr); err != nil {
		return err
	}
	if g := s.overMax; g != nil {
		return &exitError{code: 3, msg: fmt.Sprintf("GC %d (gen %d) paused %.3f ms, over --fail-on-pause-over %v",
			g.Number, g.Generation, float64(g.PauseNanos)/1e6, o.failOver)}
	}
	return st.exitStatus()
}

// analyze reads the whole stream. A truncated stream still gives a result
// (endErr says where it was cut); other read errors give none.
func (s *gcSession) analyze(st *stream) (*gcpause.Result, error) {
	r, err := nettrace.NewReader(st.R)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", st.Name, err)
	}
	keep := 0
	if st.Live {
		keep = liveRowsKept
	}
	s.a = gcpause.New(r.Header(), gcpause.Options{
		OnGC:         s.onGC,
		OnSuspension: s.onSuspension,
		// A live session keeps the most recent rows so its memory stays
		// flat; the rollup (counts, percentiles, histogram) stays exact.
		KeepGCs:         keep,
		KeepSuspensions: keep,
	})
	if s.o.trigger.over > 0 {
		s.o.trigger.perm = tracePerm(st)
		// The session goes on after a save (the monitor keeps
		// reporting); stopping it mid-stream is left to --duration.
		s.trig = newPauseTrigger(&s.o.trigger, r.Header(), nil, func(msg string) { s.log.Warn(msg) })
	}
	endErr, err := readAll(r, st.Name, func(ev *nettrace.Event) {
		if s.trig != nil {
			s.trig.event(ev)
		}
		s.a.Handle(ev)
	})
	if err != nil {
		return nil, err
	}
	if s.trig != nil {
		s.trig.finish()
		if len(s.trig.writeErrs) > 0 && endErr == nil {
			endErr = s.trig.writeErrs[0]
		}
	}
	return s.a.Result(), endErr
}
