package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/capture"
	"github.com/clrspy/clrspy/report"
	"github.com/clrspy/clrspy/source"
	"github.com/clrspy/clrspy/stacks"
)

func init() { commands = append(commands, newProfileCmd) }

func newProfileCmd() *cobra.Command {
	var format, out, compat, weight, sampler string
	var managedOnly, threads bool
	c := &cobra.Command{
		Use:   "profile [FILE|-] [--pid PID|--name NAME] [-- COMMAND ARGS]",
		Short: "Managed stack samples to pprof, speedscope, folded stacks or an HTML flame graph",
		Long: `profile samples stacks of a .NET process, or reads the samples of a trace file,
into a profile.

Two samplers (--sampler, live targets):
  perf       Linux perf_event: every thread, managed and native frames (libc,
             P/Invoke targets, the JIT, the GC) walked through frame pointers
             and DWARF unwind tables, kernel frames when permitted, samples
             taken during a GC labelled gc and gc_phase; --hz per thread
             (default 99). It never stops the process: under 2 % overhead.
  eventpipe  the runtime's sample profiler: managed frames only, every
             managed thread about once a millisecond, by suspending the
             runtime each time (20-25 % of a busy process's throughput).
  auto       perf when the kernel permits it for this target (perf_event_paranoid,
             CAP_PERFMON, the target's owner), else eventpipe with a note saying
             why. The default.
--off-cpu (perf) adds the time threads spend off the CPU: every switch-out is
walked like a sample (the sched:sched_switch tracepoint; managed, native and
kernel frames) and weighed by the time until the thread ran again. With the
CPU samples that is a wall-clock profile per thread: pprof sample types cpu,
off_cpu and wall (nanoseconds), a label state (on_cpu, off_cpu) and, off the
CPU, off_cpu (blocked, or runnable: preempted or yielded, waiting for a CPU);
folded and html weigh by time. It needs root or CAP_PERFMON with tracefs; without
them a one-line note says why and the profile is CPU only.
Trace files hold the runtime sample profiler's samples (eventpipe).

EventPipe samples:
Every sample has two values: a count, and the thread time it stands for: the
interval since the thread's previous sample, or one sampler tick when the
thread was not sampled in the previous tick (it had no managed frames).
Threads sampled outside managed code (in native code, a syscall or a wait)
get an explicit "[native code]" leaf frame; addresses no method map covers
become "[unknown]"; stacks cut at the runtime's 100-frame walk limit end in
"[truncated]". Method names are Namespace.Type.Method(arguments), resolved
from MethodLoadVerbose events and the rundown at the end of the session.

Formats:
  pprof       gzipped protobuf for 'go tool pprof' (samples/count, wall/nanoseconds)
  speedscope  JSON for https://www.speedscope.app: one profile per thread,
              time-ordered (evented: each sample holds its stack for the time
              it stands for) from the EventPipe sampler
  folded      collapsed stacks for flamegraph.pl and friends
  html        a self-contained interactive flame graph (no network)

--compat dotnetdiag writes exactly what pyroscope-io/dotnetdiag's sample
profiler writes (folded format, nanoseconds, module!Namespace.Method(sig)
frames, its time accounting) for comparison with that tool.`,
		Example: `  clrspy profile app.nettrace -o app.pb.gz && go tool pprof -top app.pb.gz
  clrspy profile --pid 1234 --duration 30s --format html -o flame.html
  clrspy profile --format folded --managed-only app.nettrace | flamegraph.pl > app.svg
  clrspy profile --format speedscope -o app.speedscope.json -- dotnet run`,
	}
	tgt := addReadFlags(c, 0)
	f := c.Flags()
	f.StringVar(&format, "format", report.ProfileFormats[0].Name, report.ProfileFormatList())
	f.StringVarP(&out, "output", "o", "", "output file (default: standard output; pprof, speedscope and html are refused on a terminal)")
	f.BoolVar(&managedOnly, "managed-only", false, "drop the time threads spent outside managed code")
	f.StringVar(&compat, "compat", "", "reproduce another tool's output: dotnetdiag")
	f.StringVar(&weight, "weight", "", "value of folded and html output: samples or wall (default samples; wall with --compat dotnetdiag)")
	f.BoolVar(&threads, "by-thread", false, "folded and html: one root frame per thread")
	po := addPerfFlags(c, &sampler)
	c.RunE = func(cmd *cobra.Command, args []string) error {
		mode, err := stacks.ParseCompat(compat)
		if err != nil {
			return err
		}
		if mode == stacks.CompatDotnetdiag && format != "folded" {
			if cmd.Flags().Changed("format") {
				return fmt.Errorf("--compat dotnetdiag writes folded stacks only (got --format %s)", format)
			}
			format = "folded"
		}
		pf, ok := report.ProfileFormatNamed(format)
		if !ok {
			return fmt.Errorf("unknown --format %q (want %s)", format, report.ProfileFormatList())
		}
		w := report.WeightSamples
		if mode == stacks.CompatDotnetdiag || po.offCPU {
			// Off-CPU entries count switch-outs: time is what adds up.
			w = report.WeightWall
		}
		if weight != "" {
			if w, err = report.ParseWeight(weight); err != nil {
				return err
			}
		}
		if pf.ForPrograms {
			if err := refuseTerminal(out, "--format "+format); err != nil {
				return err
			}
		}
		o := &profileOutput{format: pf, out: out, weight: w, threads: threads}
		live := tgt.live(cmd)
		use, err := chooseSampler(sampler, live, tgt, cmd, args, po.options())
		if err != nil {
			return err
		}
		if use == "perf" {
			if managedOnly || mode != stacks.CompatNone {
				return fmt.Errorf("--managed-only and --compat apply to the EventPipe sampler: add --sampler eventpipe")
			}
			return profilePerf(cmd, tgt, args, po, o)
		}
		return profileEventPipe(cmd, tgt, args, stacks.Options{ManagedOnly: managedOnly, Compat: mode}, o)
	}
	return c
}

// profileOutput is where and how a profile is written.
type profileOutput struct {
	format  report.ProfileFormat
	out     string
	weight  report.Weight
	threads bool
	// evented holds the samples of a time-ordered speedscope file, named
	// through builder (the EventPipe sampler; nil: the sampled form).
	evented *speedscopeSpill
	builder *stacks.Builder
}

// profileEventPipe profiles with the runtime's sample profiler (files, and
// live targets with --sampler eventpipe).
func profileEventPipe(cmd *cobra.Command, tgt *targetFlags, args []string, opts stacks.Options, o *profileOutput) error {
	ss, err := eventedSpeedscope(o.format.Name, &opts)
	if err != nil {
		return err
	}
	defer ss.Close()
	prof := capture.NewCPUProfile(&opts)
	r, err := runSet(cmd, tgt, args, prof.Set(), setRun{keep: true,
		// Decoders on other cores leave this goroutine the bottleneck:
		// the sums go to one more.
		edit: func(s *source.Spec) { opts.Concurrent = s.Threads > 1 },
		onOpen: func(st *source.Stream) []analysis.Analyzer {
			if st.Live() {
				prof.Watch(st.Pid)
			}
			return nil
		}})
	if err != nil {
		return err
	}
	o.evented, o.builder = ss, prof.Builder()
	p := prof.Result()
	return writeProfile(cmd, r.st, r.in, p, o)
}

// writeProfile writes p in the chosen format and closes the stream.
func writeProfile(cmd *cobra.Command, st *source.Stream, in report.Input, p *stacks.Profile, o *profileOutput) error {
	var partial []string
	for _, n := range in.Partial {
		partial = append(partial, "PARTIAL: "+n)
	}
	if in.Truncated {
		partial = append(partial, "names from the missing rundown are [unknown]")
	}
	p.Notes = append(partial, p.Notes...)
	po := report.ProfileOptions{Weight: o.weight, Threads: o.threads, Title: st.Name}
	if o.evented != nil {
		po.Speedscope = func(dst io.Writer) error { return o.evented.Write(dst, o.builder, p, st.Name) }
	}
	write := func(dst io.Writer) error { return o.format.Write(dst, p, po) }
	if err := writeReport(cmd, st, in, o.out, write); err != nil {
		return err
	}
	if p.Total == 0 {
		warn("%s has no stack samples", st.Name)
	}
	for _, n := range p.Notes[len(partial):] {
		notice(n)
	}
	fmt.Fprintln(os.Stderr, report.ProfileSummary(p, o.out, st.Live()))
	return nil
}
