package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/capture"
	"github.com/clrspy/clrspy/counters"
	"github.com/clrspy/clrspy/internal/cdac"
	"github.com/clrspy/clrspy/ipc"
	"github.com/clrspy/clrspy/report"
	"github.com/clrspy/clrspy/source"
	"github.com/clrspy/clrspy/triage"
)

func init() { commands = append(commands, newTriageCmd) }

// triage's Set (capture.NewTriage) takes the light providers every area
// needs, derived from its analyses (GC events, informational: pauses,
// heap statistics; contention and thread events with the symbols that
// name waiting stacks; the thread-pool and exception analyses refine the
// counters' facts where the stream has their events), and with the
// session (triageExtra) the runtime's counters (thread pool, exceptions,
// allocation, CPU) once a second. No stacks by default; --cpu adds the
// sample profiler for top methods.

// triageExtra are the providers of triage's session its Set cannot say
// (capture.TriageProviders).
func triageExtra(cpu bool, copts *counters.Options) []ipc.Provider {
	return capture.TriageProviders(cpu, copts)
}

func newTriageCmd() *cobra.Command {
	var cpu bool
	c := &cobra.Command{
		Use:   "triage [FILE|-] [--pid N | --name NAME | -- COMMAND ARGS...] [--duration 30s]",
		Short: "What is wrong with a process: ranked findings with the evidence and the next command",
		Long: `triage takes one short look at a process (an attached one for 30 s unless
--duration says otherwise, a launched one until it exits, or a trace file)
with light providers (GC events, lock contention and thread events, the
runtime's counters; no stacks unless --cpu) and runs every analysis on that
one stream. It prints findings, most severe first: the area
(gc, memory, locks, threadpool, exceptions, cpu), the severity (critical,
warning, info), a title with the number, the evidence (the figures) and the
exact clrspy command to run next. An area with data and nothing past a
threshold gets one info line with its figures; a calm process gets "nothing
above info".

The thresholds are one table, stated with the reason for each in
docs/TRIAGE.md. The thread-pool and exception findings come from the
runtime's own counters (queue length, thread count, completed items,
exception count). CPU of a live target is the time its threads ran or
waited runnable (/proc schedstat) against the machine's cores, which a
loaded machine does not shrink; for a file, the runtime's cpu-usage counter.
The top methods (leaf frames) come from perf_event beside the session where
the kernel permits it (else a notice says why); --cpu takes them from the
runtime's sample profiler instead. A single thread that wants a whole core
is judged on its own (cpu.thread_pct) and named.

Output: text (default, 100 columns) or --json (findings, facts, envelope).`,
		Example: `  clrspy triage --pid 4242
  clrspy triage --name myservice --duration 10s --json | jq '.findings[0]'
  clrspy triage --cpu -- dotnet app.dll
  clrspy triage app.nettrace`,
	}
	t, o := addSectionFlags(c, 1, report.TriageSection.Formats())
	c.Flags().BoolVar(&cpu, "cpu", false, "live sessions: name the top methods with the runtime's sample profiler (stacks in the session) rather than perf_event")
	c.RunE = o.runE(func(cmd *cobra.Command, args []string) error {
		if !report.TriageSection.Offers(o.format) {
			return fmt.Errorf("--format %s: triage writes %s", o.format, report.TriageSection.Formats())
		}
		if !cmd.Flags().Changed("duration") && t.pid != 0 || !cmd.Flags().Changed("duration") && t.name != "" {
			t.duration = 30 * time.Second
		}
		return runTriage(cmd, t, args, o.format, o.out, cpu)
	})
	return c
}

func runTriage(cmd *cobra.Command, t *targetFlags, args []string, format, out string, cpu bool) error {
	copts := counters.Options{Interval: time.Second}
	extra := triageExtra(cpu, &copts)
	sid := ""
	if t.live(cmd) {
		sid = copts.SessionID
	}
	set, a := capture.NewTriage(sid)
	var lw *capture.LiveWindow
	var tp *capture.Perf
	r, err := runSet(cmd, t, args, set, setRun{
		edit: func(s *source.Spec) { s.Providers = append(s.Providers, extra...) },
		onOpen: func(st *source.Stream) []analysis.Analyzer {
			a.SetTarget(capture.TriageTarget(st))
			if lw = capture.StartLiveWindow(st, false); !lw.Visible() {
				return nil
			}
			a.SetObjectTypes(cdac.NewNamer(st.Pid).Names) // lock types from its memory (.NET 9+)
			if cpu {
				return nil
			}
			// Without --cpu, the top methods come from perf_event where
			// the kernel permits it: no stacks in the session, under 2 %
			// overhead.
			if tp = capture.StartTriagePerf(st, a.Symbols(), notice); tp == nil {
				return nil
			}
			return []analysis.Analyzer{tp.Analyzer()}
		}})
	if tp != nil {
		// The top 5 methods by leaf samples.
		p, _ := tp.Stop()
		if ms := triage.TopLeafMethods(p, 5); len(ms) > 0 {
			a.SetTopMethods("perf", ms)
		}
	}
	if err != nil {
		return err
	}
	st, in := r.st, r.in
	split := lw.End(a, a.Symbols())
	facts := a.Facts()
	facts.Memory.Split = split
	d := report.NewTriageDocument(in, facts, a.Runtime())
	return writeReport(cmd, st, in, out, report.TriageSection.Writers(report.Run{In: in}, d).Pick(format))
}
