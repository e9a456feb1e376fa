package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/capture"
	"github.com/clrspy/clrspy/counters"
	"github.com/clrspy/clrspy/internal/stacksnap"
	"github.com/clrspy/clrspy/internal/web"
	"github.com/clrspy/clrspy/ipc"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/pageset"
	"github.com/clrspy/clrspy/report"
	"github.com/clrspy/clrspy/source"
	"github.com/clrspy/clrspy/stacks"
	"github.com/clrspy/clrspy/triage"
)

func init() { commands = append(commands, newReportCmd) }

type reportOptions struct {
	out     string
	heap    bool
	stacks  bool
	live    string
	sampler string
	perf    *perfFlags
}

func newReportCmd() *cobra.Command {
	o := &reportOptions{}
	c := &cobra.Command{
		Use:   "report [FILE|-] [--pid N | --name NAME | -- COMMAND ARGS...] [-o report.html]",
		Short: "One self-contained HTML page: GC timeline, heap, GC table, CPU flame graph, locks",
		Long: `report runs every analysis over one input at once and writes a single HTML
file to look at: no network, no external files, open it in any browser or
attach it to a ticket.

  - summary: duration, GCs per generation, % of time paused, p50/p99/max
    pause per generation, lost events and truncation, runtime version, GC
    flavor, the command line;
  - the GC timeline (one mark per GC at its start, height the pause, colour
    the generation, shape the type: circle blocking, diamond background,
    triangle foreground) above the heap per generation and the allocation
    rate; drag across either to select a time range, and every panel
    follows: the GC table (PerfView's GCStats columns, sortable, filterable
    by generation, type and reason), the pause histogram per generation,
    the longest pauses, the runtime's other suspensions, and the CPU flame
    graph (icicle or flame, callees or callers, search, colours by module or
    namespace);
  - lock contention, exceptions (by type, throw and catch site, message) and
    heap survival by type when the input has them;
  - a heap snapshot when the input holds a heap dump (clrspy record
    --profile gcdump, or a .gcdump file given alone): the dominator tree as
    an icicle (a box as wide as the bytes its object keeps alive; small
    children summed by type), the types by count, own and retained bytes,
    and a type's retention paths on click (clrspy snapshot --why's, for the
    top types). A snapshot that lost events says so.

The flame graph panel says what its samples measure. A live target is
sampled with perf_event where the kernel permits it (--sampler, as in clrspy
profile): "CPU", the threads' on-CPU time, managed, native and kernel
frames. The runtime's own sampler (--sampler eventpipe, or where perf may
not sample the target; the only one a trace file holds) samples every
managed thread whether it runs or waits: "wall clock, managed threads".

Sections appear when their events exist: a trace recorded with the gc
profile has no flame graph. A live session enables all of them but heap
survival (GC events at verbose level, the sample profiler, contention,
sampled allocations); --heap adds the GC survival and movement events that
tell which sampled objects survive (they make every GC slower: clrspy says
so, as it does for a trace file recorded with them).`,
		Example: `  clrspy report app.nettrace -o app.html
  clrspy report --pid 1234 --duration 30s -o app.html
  clrspy report -o run.html -- dotnet app.dll
  clrspy report heap.gcdump -o heap.html`,
	}
	t := addReadFlags(c, 1)
	f := c.Flags()
	f.StringVarP(&o.out, "output", "o", "report.html", "HTML file to write ('-' for stdout)")
	f.BoolVar(&o.stacks, "stacks", false, "--pid/--name: end with clrspy stacks' snapshot of every thread (a Threads section: groups, waits, deadlocks)")
	f.BoolVar(&o.heap, "heap", false, "live sessions: also enable GC survival and movement events (heap survival by type; slows every GC)")
	f.StringVar(&o.live, "live", "", "serve the page live on this address (host:port) while the session runs, until interrupted")
	f.MarkHidden("live")
	o.perf = addPerfFlags(c, &o.sampler)
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if o.out == "-" {
			if err := refuseTerminal(o.out, "report"); err != nil {
				return err
			}
		}
		if o.live != "" {
			return runReportLive(cmd, t, args, o)
		}
		return runReport(cmd, t, args, o)
	}
	return c
}

func runReport(cmd *cobra.Command, t *targetFlags, args []string, o *reportOptions) error {
	if len(args) == 1 && !t.live(cmd) && isGcdumpInput(args[0]) {
		return reportGcdump(cmd, args[0], o)
	}
	use, err := chooseSampler(o.sampler, t.live(cmd), t, cmd, args, o.perf.options())
	if err != nil {
		return err
	}
	// One Set: the page's analyses and triage's (its findings open the
	// page), sharing one symbol table; the providers are derived from it.
	set := analysis.NewSet()
	an := pageset.Register(set, pageset.Options{Movement: o.heap})
	// triage's analyses as clrspy triage registers them
	// (capture.TriageOptions: the thread-pool, exception and request
	// facts), so the page's findings are judged from the same facts; the
	// page has the profile (SetProfile below). A live session also asks
	// for what clrspy triage's asks beside its Set (triageExtra: the
	// runtime's counters, Kestrel's requests) and reads /proc as its
	// window does (capture.Window).
	copts := counters.Options{Interval: time.Second}
	extra := triageExtra(false, &copts)
	sid := ""
	if t.live(cmd) {
		sid = copts.SessionID
	}
	topts := capture.TriageOptions(sid)
	topts.NoProfile, topts.Uncounted = true, true
	tri := triage.Register(set, topts)
	var lw *capture.LiveWindow
	var cpu *capture.Perf
	r, err := runSet(cmd, t, args, set, setRun{
		edit: func(s *source.Spec) {
			s.Providers = append(s.Providers, extra...)
			if use == "perf" {
				// perf samples the CPU: the runtime's sampler would only add
				// its cost (it suspends the runtime every millisecond) and its
				// suspensions to the page.
				s.Providers = slices.DeleteFunc(s.Providers, func(p ipc.Provider) bool { return p.Name == nettrace.ProviderSampleProfiler })
			}
		},
		onOpen: func(st *source.Stream) []analysis.Analyzer {
			noteMovementLive(st, set.Providers())
			tri.SetTarget(capture.TriageTarget(st))
			lw = capture.StartLiveWindow(st, true)
			if use != "perf" {
				return nil
			}
			var err error
			if cpu, err = capture.StartPerf(st, an.Symbols, o.perf.options(), o.perf.perfMap, notice); err != nil {
				notice(fmt.Sprintf("perf sampler: %v; the page has no flame graph (--sampler eventpipe gives the runtime's wall-clock samples)", err))
				return nil
			}
			return []analysis.Analyzer{cpu.Analyzer()}
		}})
	var prof *stacks.Profile
	if cpu != nil {
		var perr error
		if prof, perr = cpu.Stop(); perr != nil {
			warn("perf sampler: %v", perr)
		}
	}
	if err != nil {
		return err
	}
	st, in := r.st, r.in
	noteMovementFile(st)
	split := lw.End(tri, an.Symbols)
	pp := capture.PageParts(st, an, in)
	if prof != nil {
		pp.Views = []report.FlameView{{Label: report.LabelCPU, Profile: prof}}
	}
	if prof != nil {
		tri.SetProfile("perf", prof)
	} else if pp.CPU != nil && pp.Timeline != nil && pp.Stacks != nil {
		tri.SetProfile("eventpipe", pp.Timeline.WithSamples(pp.Stacks, pp.CPU))
	}
	facts := tri.Facts()
	facts.Memory.Split = split
	if win := lw.Window(); win != nil {
		ss, epoch, limit, usage := win.Memory()
		pp.Memory = report.PageMemoryOf(ss, int64(epoch.Sub(pp.Start)), limit, usage)
	}
	pp.Findings = triage.Findings(facts)
	if o.stacks {
		if !st.Live() || st.Kind != source.Attach {
			warn("--stacks: the threads section needs a process attached to (--pid, --name)")
		} else if snap, _, serr := stacksSnapshot(cmd, st.Pid, t.bufferMB, stacksnap.DefaultSampleFor); serr != nil {
			warn("--stacks: no threads section: %v", serr)
		} else {
			pp.Threads = snap
		}
	}
	page := report.NewPage(pp)
	if s := page.Snapshot; s != nil && !s.Complete {
		in.Partial = append(in.Partial, s.Note) // warned by finish
	}
	if pp.SnapshotError != "" {
		in.Partial = append(in.Partial, pp.SnapshotError)
	}
	if err := writeReport(cmd, st, in, o.out, func(w io.Writer) error { return report.WritePage(w, page) }); err != nil {
		return err
	}
	if o.out != "-" {
		fmt.Fprintln(os.Stderr, page.WroteLine(st.Name, o.out, false))
	}
	return nil
}

// reportGcdump writes the page of a .gcdump file: its heap snapshot
// section alone (the file holds no events).
func reportGcdump(cmd *cobra.Command, path string, o *reportOptions) error {
	if o.heap {
		return fmt.Errorf("--heap applies to live sessions, not to %s", path)
	}
	in, g, err := readGcdump(path)
	if err != nil {
		return err
	}
	page := report.NewPage(report.PageParts{Title: path, Input: in, Snapshot: g})
	w, closeOut, err := openOutput(cmd, nil, o.out)
	if err != nil {
		return err
	}
	if err := closeOut(report.WritePage(w, page)); err != nil {
		return err
	}
	for _, p := range page.Input.Partial {
		warn("%s: %s", path, p)
	}
	if o.out != "-" {
		fmt.Fprintln(os.Stderr, page.WroteLine(path, o.out, true))
	}
	return nil
}

// runReportLive serves the page live while the session runs (a hidden
// flag until clrspy serve --web mounts the same handler), then keeps the
// final page up until interrupted; -o also writes it as a file.
func runReportLive(cmd *cobra.Command, t *targetFlags, args []string, o *reportOptions) error {
	spec, err := t.spec(cmd, args, web.PageProviders(o.heap))
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.live)
	if err != nil {
		return fmt.Errorf("--live %s: %w", o.live, err)
	}
	st, stopWatch, err := openTarget(spec)
	if err != nil {
		ln.Close()
		return err
	}
	noteMovementLive(st, spec.Providers)
	hub := web.NewStreamHub(st, web.StreamOptions{})
	shutdown := hub.Serve(ln, web.Options{Title: st.Name})
	notice(fmt.Sprintf("live view of %s: http://%s/", st.Name, ln.Addr()))
	end, err := hub.Run()
	stopWatch()
	var stats analysis.Stats
	for _, a := range hub.Analyzers() {
		stats.Add(a.Stats())
	}
	in := report.NewInput(st.Name, st.Live(), end, stats)
	if err == nil {
		notice("the stream ended; the page stays up until Ctrl-C")
		sigs := make(chan os.Signal, 1)
		signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
		<-sigs
		signal.Stop(sigs)
	}
	shutdown()
	if err == nil && cmd.Flags().Changed("output") {
		w, closeOut, oerr := openOutput(cmd, st, o.out)
		if oerr != nil {
			st.Close()
			return oerr
		}
		err = closeOut(report.WritePage(w, hub.Page()))
	}
	return finish(st, in, err)
}
