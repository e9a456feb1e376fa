package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/counters"
	"github.com/clrspy/clrspy/internal/procfs"
	"github.com/clrspy/clrspy/ipc"
	"github.com/clrspy/clrspy/perf"
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
	s := analysis.NewSet()
	triage.Register(s, triage.Options{Refine: true})
	ps := s.Providers()
	// Kestrel's request events (informational, no stacks): what GC
	// pauses cost the requests of an ASP.NET Core server.
	ps = append(ps, ipc.Provider{Name: clrevents.ProviderKestrel, Level: clrevents.LevelInformational})
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
	t := addTargetFlags(c)
	addThreadsFlag(c, &t.threads, 1)
	o := addReportFlags(c, "text or json")
	c.Flags().BoolVar(&cpu, "cpu", false, "live sessions: name the top methods with the runtime's sample profiler (stacks in the session) rather than perf_event")
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

// triagePerf is perf_event's sampler run beside a triage session for
// the top methods.
type triagePerf struct {
	s      *perf.Sampler
	b      *perf.Builder
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// startTriagePerf starts the perf sampler on st's process at 99 Hz per
// thread; nil (and a note on why) where the kernel does not permit it.
func startTriagePerf(st *source.Stream, sym *stacks.Symbols) *triagePerf {
	opts := perf.Options{Hz: 99}
	if _, err := perf.Check(st.Pid, opts); err != nil {
		notice(fmt.Sprintf("top methods: the perf sampler is unavailable (%v); --cpu adds the runtime's sampler", err))
		return nil
	}
	s, err := perf.Open(st.Pid, opts)
	if err != nil {
		notice(fmt.Sprintf("top methods: %v", err))
		return nil
	}
	b, err := perf.NewBuilder(st.Pid, st.Header(), sym, perf.BuilderOptions{Hz: opts.Hz})
	if err != nil {
		s.Close()
		notice(fmt.Sprintf("top methods: %v", err))
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	tp := &triagePerf{s: s, b: b, cancel: cancel}
	tp.wg.Add(1)
	go func() {
		defer tp.wg.Done()
		_ = s.Run(ctx, b.Sample)
	}()
	return tp
}

// stop ends the sampler and returns the top 5 methods by leaf samples.
func (tp *triagePerf) stop() []triage.Method {
	tp.cancel()
	tp.wg.Wait()
	tp.s.Close()
	defer tp.b.Close()
	tp.b.Finish()
	return topLeafMethods(tp.b.Result(), 5)
}

// topLeafMethods is a profile's n methods with the most samples as the
// leaf frame, with their share of the samples (argument lists dropped).
func topLeafMethods(p *stacks.Profile, n int) []triage.Method {
	by := map[string]int64{}
	var total int64
	for _, s := range p.Samples {
		if s.OffCPU || len(s.Stack) == 0 {
			continue
		}
		name := p.Frames[s.Stack[0]].Name
		if i := strings.IndexByte(name, '('); i > 0 {
			name = name[:i]
		}
		by[name] += s.Count
		total += s.Count
	}
	var out []triage.Method
	for name, c := range by {
		out = append(out, triage.Method{Name: name, Pct: float64(c) * 100 / float64(total)})
	}
	slices.SortFunc(out, func(x, y triage.Method) int {
		return cmp.Or(cmp.Compare(y.Pct, x.Pct), strings.Compare(x.Name, y.Name))
	})
	return out[:min(n, len(out))]
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
	set := analysis.NewSet()
	a := triage.Register(set, triage.Options{Target: target, CounterSessionID: sid, Refine: true})
	set.Start(st.Header())
	var sched *procfs.DemandSampler
	var proc *source.ProcWatcher
	if st.Live() && st.Kind != source.Listen && st.Pid > 0 {
		sched = procfs.StartThreadDemand(st.Pid, 500*time.Millisecond)
		proc = source.WatchProc(st.Pid)
	}
	// Without --cpu, the top methods come from perf_event where the
	// kernel permits it: no stacks in the session, under 2 % overhead.
	var tp *triagePerf
	if !cpu && st.Live() && st.Kind != source.Listen && st.Pid > 0 {
		tp = startTriagePerf(st, a.Symbols())
	}
	as := []analysis.Analyzer{set}
	if tp != nil {
		as = append(as, tp.b)
	}
	in, err := run(st, stopWatch, as...)
	if tp != nil {
		if ms := tp.stop(); len(ms) > 0 {
			a.SetTopMethods("perf", ms)
		}
	}
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
	if sched != nil {
		if tid, pct := sched.Busiest(); pct > 0 {
			name := ""
			if proc != nil {
				name = proc.ThreadNames()[tid]
			}
			a.SetBusiestThread(tid, name, pct)
		}
	}
	d := report.NewTriageDocument(in, a.Facts(), a.Runtime())
	return writeReport(cmd, st, in, out, formats{
		text: func(w io.Writer) error { return report.WriteTriageText(w, d) },
		json: func(w io.Writer) error { return report.WriteTriageJSON(w, d) },
	}.pick(format))
}
