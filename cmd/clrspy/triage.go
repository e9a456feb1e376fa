package main

import (
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/counters"
	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/internal/procfs"
	"github.com/clrspy/clrspy/ipc"
	"github.com/clrspy/clrspy/locks"
	"github.com/clrspy/clrspy/memory"
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
	var asJSON, cpu bool
	var format, out string
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
	c.Flags().BoolVar(&asJSON, "json", false, "print one JSON document (same as --format json)")
	c.Flags().StringVar(&format, "format", "text", "output format: text or json")
	c.Flags().StringVarP(&out, "output", "o", "", "write the report to this file instead of stdout")
	c.Flags().BoolVar(&cpu, "cpu", false, "live sessions: also run the sample profiler to name the top methods")
	c.RunE = func(cmd *cobra.Command, args []string) error {
		var err error
		if format, err = reportFormat(cmd, asJSON, format, out); err != nil {
			return err
		}
		if format != "text" && format != "json" {
			return fmt.Errorf("--format %s: triage writes text or json", format)
		}
		if !cmd.Flags().Changed("duration") && t.pid != 0 || !cmd.Flags().Changed("duration") && t.name != "" {
			t.duration = 30 * time.Second
		}
		return runTriage(cmd, t, args, format, out, cpu)
	}
	return c
}

// schedSampler reads the target's schedstat time every half second and
// keeps the first and the latest good reading: the target may exit
// before the session's end is read.
type schedSampler struct {
	pid  int
	stop chan struct{}
	done chan struct{}
	mu   sync.Mutex
	n    int
	t0   time.Time
	v0   int64
	t1   time.Time
	v1   int64
}

func startSched(pid int) *schedSampler {
	s := &schedSampler{pid: pid, stop: make(chan struct{}), done: make(chan struct{})}
	s.read()
	go func() {
		defer close(s.done)
		tk := time.NewTicker(500 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-tk.C:
				s.read()
			}
		}
	}()
	return s
}

func (s *schedSampler) read() {
	v, err := procfs.SchedNanos(s.pid)
	if err != nil {
		return
	}
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n == 0 {
		s.t0, s.v0 = now, v
	}
	s.t1, s.v1 = now, max(v, s.v1)
	s.n++
}

// pct stops the sampler and returns the CPU the process asked for as a
// share of cores (-1: fewer than two readings a second apart).
func (s *schedSampler) pct(cores int) float64 {
	s.read()
	close(s.stop)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	el := s.t1.Sub(s.t0)
	if s.n < 2 || el < time.Second || cores <= 0 {
		return -1
	}
	return float64(s.v1-s.v0) * 100 / float64(el.Nanoseconds()) / float64(cores)
}

// splitSampler reads the target's memory split (package memory) and its
// cgroup every second while the session runs: the memory finding of
// what the GC's figures cannot see.
type splitSampler struct {
	pid   int
	start time.Time
	stop  chan struct{}
	done  chan struct{}
	ss    []memory.Sample
	limit uint64
	usage uint64
}

func startSplits(pid int) *splitSampler {
	s := &splitSampler{pid: pid, start: time.Now(), stop: make(chan struct{}), done: make(chan struct{})}
	s.read()
	go func() {
		defer close(s.done)
		tk := time.NewTicker(time.Second)
		defer tk.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-tk.C:
				s.read()
			}
		}
	}()
	return s
}

func (s *splitSampler) read() {
	sp, cg, err := readSplit(s.pid)
	if err != nil {
		return
	}
	smp := memory.Sample{AtNs: int64(time.Since(s.start)), Split: *sp}
	if cg != nil {
		smp.CgroupUsage = cg.Usage
		s.limit, s.usage = cg.Limit, cg.Usage
	}
	s.ss = append(s.ss, smp)
}

// readSplit is pid's memory split now (smaps and its threads' stack
// pointers, no runtime session) and its memory cgroup (nil: none
// visible): triage's and top's reading.
func readSplit(pid int) (*memory.Split, *procfs.CgroupMemory, error) {
	es, err := procfs.Smaps(pid)
	if err != nil {
		return nil, nil, err
	}
	if len(es) == 0 {
		return nil, nil, errGone
	}
	sp := memory.Classify(es, memory.Hints{StackPointers: spList(procfs.ThreadStackPointers(pid))})
	cg, err := procfs.ReadCgroupMemory(pid)
	if err != nil {
		cg = nil
	}
	return &sp, cg, nil
}

// facts stops the sampler (one last read) and judges the samples (nil:
// none could be read).
func (s *splitSampler) facts() *triage.SplitFacts {
	close(s.stop)
	<-s.done
	s.read()
	return triage.SplitOf(s.ss, s.limit, s.usage)
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
	spec, err := t.spec(cmd, args, triageProviders(cpu, &copts))
	if err != nil {
		return err
	}
	st, stopWatch, err := openTarget(spec)
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
	var sched *schedSampler
	var mem *splitSampler
	var proc *source.ProcWatcher
	if st.Live() && st.Kind != source.Listen && st.Pid > 0 {
		sched = startSched(st.Pid)
		if st.Kind == source.Attach {
			// A launched program's start-up grows its native heap and
			// loader heaps from nothing: not a trend to judge.
			mem = startSplits(st.Pid)
		}
		proc = source.WatchProc(st.Pid)
	}
	in, err := run(st, stopWatch, sym, a)
	if err != nil {
		st.Close()
		return err
	}
	if proc != nil {
		proc.Stop()
		a.Symbols().SetMappings(proc.Mappings())
	}
	cores, demand := 0, -1.0
	if sched != nil {
		cores = runtime.NumCPU()
		demand = sched.pct(cores)
	}
	a.SetCPU(cores, demand)
	facts := a.Facts()
	if mem != nil {
		facts.Memory.Split = mem.facts()
	}
	d := report.NewTriageDocument(in, facts, a.Runtime())
	w, closeOut, err := openOutput(cmd, st, out)
	if err != nil {
		st.Close()
		return err
	}
	if format == "json" {
		err = report.WriteTriageJSON(w, d)
	} else {
		err = report.WriteTriageText(w, d)
	}
	err = closeOut(err)
	return finish(st, in, err)
}
