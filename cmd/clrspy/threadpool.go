package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/counters"
	"github.com/clrspy/clrspy/ipc"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/report"
	"github.com/clrspy/clrspy/stacks"
	"github.com/clrspy/clrspy/threadpool"
)

func init() { commands = append(commands, newThreadPoolCmd) }

// threadPoolSet: the pool analysis, which reads the pool's events
// (Threading) and blocking waits with their stacks (WaitHandle, .NET 9+;
// Contention), after the symbol table (method and module events name the
// stacks); its session also asks for the runtime's counters every second
// (the queue length). samples adds the sample profiler: the only source
// of blocking stacks on .NET 8. WaitHandleWaitStart/Stop are verbose
// events, so the session is (and, with Threading, ThreadPoolEnqueue and
// Dequeue come too: two events per work item).
func threadPoolSet(samples bool) (*analysis.Set, *analysis.Ref[*threadpool.Analyzer]) {
	ps := counters.Providers(&counters.Options{Interval: time.Second})
	if samples {
		ps = append(ps, ipc.SampleProfiler)
	}
	return withSymbols(analysis.Spec{Name: "threadpool", Keep: threadpool.Wants, Providers: ps},
		func(h *nettrace.Header, sym *stacks.Symbols) *threadpool.Analyzer {
			return threadpool.New(h, threadpool.Options{Symbols: sym, Counters: counters.New(h, counters.Options{}), FeedCounters: true})
		})
}

func newThreadPoolCmd() *cobra.Command {
	var samples bool
	c := &cobra.Command{
		Use:   "threadpool [FILE|-] [--pid N | --name NAME | -- COMMAND ARGS...]",
		Short: "Thread-pool starvation: worker threads, queue, injections and the calls that blocked the pool",
		Long: `threadpool follows the runtime's thread pool: the worker thread count, the
queue length and completed items per second (one timeline row per second), and
every change of the pool's target thread count with its reason (warmup,
climbing move, starvation, cooperative blocking, ...).

Starvation episodes begin at the pool's first injection because its threads
were blocked (starvation or cooperative blocking), or when the queue grew over
two counter intervals while no worker parked. They end when a worker parks
(the pool has more threads than its target: the blocked ones run again) or the
queue counter reads 0, and no injection for blocked threads follows within
500 ms. Episodes under 100 ms are counted, not listed. Each has its start and
end (UTC and time since the session began), threads before and after,
injections and the longest queue.

Blocking sites: what the pool threads were blocked on, by call site (the
first application frame above the wait, with the framework call it made),
with the time blocked and the number of waits, longest first; waits on a
Task (.Wait(), .Result, GetAwaiter().GetResult()) are marked
sync-over-async. On .NET 9 and later the runtime's WaitHandleWaitStart/Stop
events give every wait and its stack (they are verbose events: the session
asks for the runtime provider at the verbose level); lock waits come from
the contention events. On .NET 8 there are no WaitHandle events: --samples
takes the sampler's stacks of pool threads in blocking frames instead (the
blocked time is then estimated from the sampling intervals).

Output: a text report (default), --json, or --format pprof (the pool
threads' blocked time by stack, readable by go tool pprof).`,
		Example: `  clrspy threadpool -- dotnet MyService.dll
  clrspy threadpool --pid 1234 --duration 30s
  clrspy threadpool --samples --pid 1234 --duration 30s     # .NET 8
  clrspy threadpool --json app.nettrace | jq '.starvation'
  clrspy threadpool --format pprof -o blocked.pb.gz --pid 1234 --duration 20s`,
	}
	t, o := addSectionFlags(c, 1, report.ThreadPoolSection.Formats())
	c.Flags().BoolVar(&samples, "samples", false, "live sessions: also take the runtime's stack samples (blocking sites on .NET 8, which sends no WaitHandle events)")
	c.RunE = o.runE(func(cmd *cobra.Command, args []string) error {
		set, a := threadPoolSet(samples)
		return runSection(cmd, t, args, o, set, a, report.ThreadPoolSection)
	})
	return c
}
