package main

import (
	"fmt"
	"io"
	"runtime"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/counters"
	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/internal/procfs"
	"github.com/clrspy/clrspy/ipc"
	"github.com/clrspy/clrspy/locks"
	"github.com/clrspy/clrspy/report"
	"github.com/clrspy/clrspy/source"
	"github.com/clrspy/clrspy/stacks"
	"github.com/clrspy/clrspy/triage"
)

func init() { commands = append(commands, newTriageCmd) }

// triageProviders: the light providers every triage area needs: GC
// events (informational: pauses, heap statistics), contention and thread
// events with the symbols that name waiting stacks, and the runtime's
// counters (thread pool, exceptions, allocation, CPU) once a second. No
// stacks by default; --cpu adds the sample profiler for top methods.
func triageProviders(cpu bool, copts *counters.Options) []ipc.Provider {
	ps := clrevents.ProvidersFor(gcpause.Wants, locks.WantsContention, stacks.SymbolsWant)
	if cpu {
		ps = append(ps, ipc.SampleProfiler)
	}
	return append(ps, counters.Providers(copts)...)
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
--cpu adds the sample profiler and names the top methods.

Output: text (default, 100 columns) or --json (findings, facts, envelope).`,
		Example: `  clrspy triage --pid 4242
  clrspy triage --name myservice --duration 10s --json | jq '.findings[0]'
  clrspy triage --cpu -- dotnet app.dll
  clrspy triage app.nettrace`,
	}
	t := addTargetFlags(c)
	addThreadsFlag(c, &t.threads, 1)
	o := addReportFlags(c, "text or json")
	c.Flags().BoolVar(&cpu, "cpu", false, "live sessions: also run the sample profiler to name the top methods")
	c.RunE = o.runE(func(cmd *cobra.Command, args []string) error {
		if o.format != "text" && o.format != "json" {
			return fmt.Errorf("--format %s: triage writes text or json", o.format)
		}
		if !cmd.Flags().Changed("duration") && t.pid != 0 || !cmd.Flags().Changed("duration") && t.name != "" {
			t.duration = 30 * time.Second
		}
		return runTriage(cmd, t, args, o.format, o.out, cpu)
	})
	return c
}

// triageTarget names the target in the next commands: an attached pid,
// a launched command (its process is gone when the next command runs), a
// file.
func triageTarget(st *source.Stream) string {
	switch {
	case st.Kind == source.Launch:
		return "-- " + st.Name
	case st.Live():
		return "--pid " + strconv.Itoa(st.Pid)
	}
	return st.Name
}

func runTriage(cmd *cobra.Command, t *targetFlags, args []string, format, out string, cpu bool) error {
	copts := counters.Options{Interval: time.Second}
	st, stopWatch, err := t.open(cmd, args, triageProviders(cpu, &copts))
	if err != nil {
		return err
	}
	target := triageTarget(st)
	sid := ""
	if st.Live() {
		sid = copts.SessionID
	}
	// One symbol table for the analyses that name stacks; the thread-pool
	// and exception analyses refine the counters' facts where the stream
	// has their events.
	sym := stacks.NewSymbols(st.Header())
	a := triage.New(st.Header(), triage.Options{Target: target, CounterSessionID: sid, Symbols: sym,
		Contributors: []triage.Contributor{triage.ThreadPool(st.Header(), sym), triage.Exceptions(st.Header(), sym)}})
	var sched *procfs.DemandSampler
	var proc *source.ProcWatcher
	if st.Live() && st.Kind != source.Listen && st.Pid > 0 {
		sched = procfs.StartDemand(st.Pid, 500*time.Millisecond)
		proc = source.WatchProc(st.Pid)
	}
	in, err := run(st, stopWatch, sym, a)
	if err != nil {
		st.Close()
		return err
	}
	proc.Finish(a.Symbols().SetMappings)
	cores, demand := 0, -1.0
	if sched != nil {
		cores = runtime.NumCPU()
		demand = sched.Pct(cores)
	}
	a.SetCPU(cores, demand)
	d := report.NewTriageDocument(in, a.Facts(), a.Runtime())
	return writeReport(cmd, st, in, out, formats{
		text: func(w io.Writer) error { return report.WriteTriageText(w, d) },
		json: func(w io.Writer) error { return report.WriteTriageJSON(w, d) },
	}.pick(format))
}
