package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/internal/flightrec"
	"github.com/clrspy/clrspy/ipc"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/report"
	"github.com/clrspy/clrspy/requests"
	"github.com/clrspy/clrspy/source"
)

func init() { commands = append(commands, newGCCmd) }

// gcOptions are the flags of clrspy gc.
type gcOptions struct {
	info, warn  time.Duration
	slowSuspend time.Duration
	level       string
	log         bool
	logJSON     bool
	asJSON      bool
	asCSV       bool
	out         string
	sample      bool
	requests    bool
	failOver    time.Duration
	trigger     triggerFlags
}

// gcSet: the pause analysis, which reads the GC and suspension events
// (the GC keyword, informational); a file's requests (withRequests) hear
// of its suspensions (analysis.Stopped), for the requests each pause hit
// (clrspy requests has the rest); a live session's (liveRequests) asks
// for Kestrel's request events too (informational), for the requests each
// pause froze in its log.
func gcSet(o gcpause.Options, withRequests, liveRequests bool) (*analysis.Set, *analysis.Ref[*gcpause.Analyzer], *analysis.Ref[*requests.Analyzer]) {
	s := analysis.NewSet()
	gc := gcpause.In(s, o)
	var reqs *analysis.Ref[*requests.Analyzer]
	if withRequests || liveRequests {
		var ps []ipc.Provider
		if liveRequests {
			ps = []ipc.Provider{{Name: clrevents.ProviderKestrel, Level: clrevents.LevelInformational}}
		}
		reqs = analysis.Add(s, analysis.Spec{Name: "requests", Keep: requests.Wants, Enable: wants(), Providers: ps}, func(h *nettrace.Header) *requests.Analyzer {
			return requests.New(h, requests.Options{Slowest: 1})
		})
	}
	return s, gc, reqs
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

While a live session runs, each pause is logged on stderr (for a file: with
--log): Debug below --info, Info below --warn, Warn at or above it; --level
picks what is printed. At the end (Ctrl-C, target exit, --duration, end of
file) the report goes to stdout (or -o FILE): a one-line summary, the rollup by
generation, a pause histogram, the longest pauses and suspensions by reason,
as text, --json, or --csv (one row per GC, PerfView's columns).

Pauses follow PerfView's GCStats rules: pause = SuspendEEBegin to RestartEEEnd,
suspend = SuspendEEBegin to SuspendEEEnd; a background GC's pause is the sum
of its short stops; a GC is complete once its heap statistics arrived. Beside
it, "runtime" is the runtime's own definition, what GC.GetTotalPauseDuration
adds up (from just before the suspension to the end of the GC, without the
restart). Totals and "% paused" count stopped wall time once: overlapping
stops of two GCs are not added twice. A GC that began before the trace has a
lower-bound pause and stays out of max, mean and percentiles.
The gen column reads 0N, 1N, 2B, 2F...: the generation collected, then N
non-concurrent (blocking), B background or F foreground; I marks an induced
GC (GC.Collect), i an induced one the runtime was free to skip. A trace file
with ASP.NET Core request events (clrspy record --profile requests) adds the
requests each of the longest pauses hit (clrspy requests has the rest); so does a
live session with --requests (Kestrel's request events), and each pause's log
line then says how many requests it froze (requests_frozen).`,
		Example: `  clrspy gc app.nettrace
  clrspy gc --pid 1234 --duration 1m --warn 50ms
  clrspy gc --json -o gc.json -- dotnet app.dll
  clrspy gc --fail-on-pause-over 200ms -- dotnet test.dll   # exit 3 on a long pause`,
	}
	t := addReadFlags(c, 0)
	f := c.Flags()
	f.DurationVar(&o.info, "info", 10*time.Millisecond, "pauses from this long are logged at Info level (shorter: Debug)")
	f.DurationVar(&o.warn, "warn", 100*time.Millisecond, "pauses from this long are logged at Warn level")
	f.DurationVar(&o.slowSuspend, "slow-suspend", 5*time.Millisecond, "flag suspensions (time to stop threads) longer than this")
	f.StringVar(&o.level, "level", "info", "pause log level: debug, info, warn or none")
	f.BoolVar(&o.log, "log", false, "log every pause on stderr for a trace file too (live sessions always do)")
	f.BoolVar(&o.logJSON, "log-json", false, "pause log as JSON lines")
	f.BoolVar(&o.asJSON, "json", false, "report as one JSON document")
	f.BoolVar(&o.asCSV, "csv", false, "report as CSV, one row per GC (PerfView's columns)")
	f.StringVarP(&o.out, "output", "o", "", "write the report to this file instead of stdout")
	f.BoolVar(&o.requests, "requests", false, "live sessions: ask for Kestrel's request events; each pause's log line says how many requests it froze")
	f.BoolVar(&o.sample, "sample", false, "also run the sample profiler in a live session (its suspensions are accounted separately)")
	f.DurationVar(&o.failOver, "fail-on-pause-over", 0, "exit with status 3 when any GC pause is longer than this")
	addGCTriggerFlags(c, &o.trigger)
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if o.asJSON && o.asCSV {
			return fmt.Errorf("--json and --csv contradict each other: pick one")
		}
		if o.info > o.warn {
			return fmt.Errorf("--info (%v) must not be longer than --warn (%v)", o.info, o.warn)
		}
		if _, err := report.ParseLevel(o.level); err != nil {
			return err
		}
		if o.requests && !t.live(cmd) {
			return fmt.Errorf("--requests applies to live sessions: a trace file's request events are read when it has them")
		}
		if err := o.trigger.check(t.live(cmd)); err != nil {
			return err
		}
		return runGC(cmd, t, args, o)
	}
	return c
}

func (o *gcOptions) pauseLog(reqs **analysis.Ref[*requests.Analyzer]) *report.PauseLog {
	lvl, _ := report.ParseLevel(o.level)
	return report.NewPauseLog(os.Stderr, report.PauseLogOptions{
		Info: o.info, Warn: o.warn, SlowSuspend: o.slowSuspend, Level: lvl, JSON: o.logJSON,
		Color:          !o.logJSON && isTerminal(os.Stderr) && os.Getenv("NO_COLOR") == "",
		RequestsFrozen: func(g *gcpause.GC) (int64, bool) { return requestsFrozen(*reqs, g) },
	})
}

// requestsFrozen is how many requests g's pause froze, once request
// events came (the pause log's requests_frozen).
func requestsFrozen(r *analysis.Ref[*requests.Analyzer], g *gcpause.GC) (int64, bool) {
	if r == nil {
		return 0, false
	}
	return r.Get().FrozenSeen(g.Number, g.PauseStartNanos+g.PauseNanos)
}

func runGC(cmd *cobra.Command, t *targetFlags, args []string, o *gcOptions) error {
	live := t.live(cmd)
	var overMax *gcpause.GC // the first pause over --fail-on-pause-over
	var log *report.PauseLog
	var reqs *analysis.Ref[*requests.Analyzer]
	if live || o.log {
		log = o.pauseLog(&reqs)
	}
	var trig *flightrec.PauseTrigger
	opts := gcpause.Options{
		OnGCStart: func(g *gcpause.GC) {
			if trig != nil {
				trig.GCStart(g)
			}
		},
		OnGC: func(g *gcpause.GC) {
			if trig != nil {
				trig.GC(g)
			}
			if o.failOver > 0 && g.Complete && g.PauseNanos > int64(o.failOver) && overMax == nil {
				overMax = g
			}
			if log != nil {
				log.GC(g)
			}
		},
	}
	if log != nil {
		opts.OnSuspension = log.Suspension
	}
	rows := report.NewGCRows(&opts, live, o.asJSON || o.asCSV, o.asCSV)
	defer rows.Close()
	set, a, reqs0 := gcSet(opts, !live, live && o.requests)
	reqs = reqs0
	// The analysis reads GC events (and a file's request events, for the
	// requests each pause hit) only: a file's reader may skip the rest,
	// but for a trigger (its ring records every event).
	r, err := runSet(cmd, t, args, set, setRun{keep: o.trigger.over == 0,
		edit: func(s *source.Spec) {
			if o.sample {
				s.Providers = append(s.Providers, ipc.SampleProfiler)
			}
		},
		onOpen: func(st *source.Stream) []analysis.Analyzer {
			if o.trigger.over == 0 {
				return nil
			}
			// The session goes on after a save (the monitor keeps
			// reporting); stopping it is left to --duration or Ctrl-C.
			say := notice
			if log != nil {
				// In the pause log, so --log-json readers see the saves too.
				say = func(m string) { log.Logger().Warn(m) }
			}
			trig = o.trigger.newTrigger(st.Header(), o.trigger.out, outputPerm(st), say, nil)
			return []analysis.Analyzer{trig} // after the pause analysis: it hears of each GC's start first
		}})
	if err != nil {
		return err
	}
	st, in := r.st, r.in
	if trig != nil {
		trig.Finish()
	}
	noteMovementFile(st)
	res := rows.Complete(a.Get().Result())
	w, closeOut, err := openOutput(cmd, st, o.out)
	if err != nil {
		st.Close()
		return err
	}
	format := "text"
	if o.asJSON {
		format = "json"
	} else if o.asCSV {
		format = "csv"
	}
	err = report.WriteGC(w, format, in, res, rows.Spool(), requestsHit(reqs))
	err = closeOut(err)
	if trig != nil && len(trig.Errors()) > 0 && err == nil {
		err = trig.Errors()[0]
	}
	if err := finish(st, in, err); err != nil {
		return err
	}
	if g := overMax; g != nil {
		return &exitError{code: 3, msg: fmt.Sprintf("GC %d (gen %d) paused %.3f ms, over --fail-on-pause-over %v",
			g.Number, g.Generation, float64(g.PauseNanos)/1e6, o.failOver)}
	}
	return nil
}

// requestsHit is the requests each GC hit, by GC number; nil without
// request events.
func requestsHit(r *analysis.Ref[*requests.Analyzer]) map[uint32]int64 {
	if r == nil {
		return nil
	}
	return r.Get().Result().HitByGCNumber()
}
