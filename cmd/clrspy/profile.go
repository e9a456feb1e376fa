package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/clrspy/clrspy/ipc"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/report"
	"github.com/clrspy/clrspy/source"
	"github.com/clrspy/clrspy/stacks"
)

func init() { commands = append(commands, newProfileCmd) }

// profileProviders is what a live CPU profile needs: the sample profiler,
// and method/module events so methods jitted while recording are named;
// rundown names the rest.
var profileProviders = []ipc.Provider{
	{Name: nettrace.ProviderSampleProfiler, Keywords: ipc.SampleProfilerKeywords, Level: ipc.LevelInformational},
	{Name: nettrace.ProviderRuntime, Keywords: ipc.KeywordSymbols, Level: ipc.LevelInformational},
}

func newProfileCmd() *cobra.Command {
	var format, out, compat, weight string
	var managedOnly, threads bool
	c := &cobra.Command{
		Use:   "profile [FILE|-] [--pid PID|--name NAME] [-- COMMAND ARGS]",
		Short: "Managed stack samples to pprof, speedscope, folded stacks or an HTML flame graph",
		Long: `profile turns the runtime's sample profiler (every managed thread's stack,
about once a millisecond) into a profile.

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
  speedscope  JSON for https://www.speedscope.app: one time-ordered (evented)
              profile per thread, each sample holding its stack for the time
              it stands for
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
	tgt := addTargetFlags(c)
	f := c.Flags()
	f.StringVar(&format, "format", "pprof", "pprof, speedscope, folded or html")
	f.StringVarP(&out, "output", "o", "", "output file ('-' for stdout; default: stdout for folded, profile.<ext> otherwise)")
	f.BoolVar(&managedOnly, "managed-only", false, "drop the time threads spent outside managed code")
	f.StringVar(&compat, "compat", "", "reproduce another tool's output: dotnetdiag")
	f.StringVar(&weight, "weight", "", "value of folded and html output: samples or wall (default samples; wall with --compat dotnetdiag)")
	f.BoolVar(&threads, "threads", false, "folded and html: one root frame per thread")
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
		var ext string
		switch format {
		case "pprof":
			ext = "pb.gz"
		case "speedscope":
			ext = "speedscope.json"
		case "folded":
		case "html":
			ext = "html"
		default:
			return fmt.Errorf("unknown --format %q (want pprof, speedscope, folded or html)", format)
		}
		w := report.WeightSamples
		if mode == stacks.CompatDotnetdiag {
			w = report.WeightWall
		}
		if weight != "" {
			if w, err = report.ParseWeight(weight); err != nil {
				return err
			}
		}
		if out == "" && ext != "" {
			out = "profile." + ext
		}
		spec, err := tgt.spec(cmd, args, profileProviders)
		if err != nil {
			return err
		}
		st, stopWatch, err := openTarget(spec)
		if err != nil {
			return err
		}
		opts := stacks.Options{ManagedOnly: managedOnly, Compat: mode}
		ss, err := eventedSpeedscope(format, &opts)
		if err != nil {
			st.Close()
			return err
		}
		defer ss.Close()
		b := stacks.New(st.Header(), opts)
		var proc *source.ProcWatcher
		if st.Live() {
			// Events carry no thread names; the OS has them while the
			// threads live, so read them during the session.
			proc = source.WatchProc(st.Pid)
		}
		in, err := run(st, stopWatch, b)
		if err != nil {
			st.Close()
			return err
		}
		if proc != nil {
			proc.Stop()
			b.SetMappings(proc.Mappings())
		}
		p := b.Result()
		if proc != nil {
			names := proc.ThreadNames()
			for i := range p.Threads {
				p.Threads[i].Name = names[p.Threads[i].ID]
			}
		}
		p.Notes = in.Partial
		if in.Truncated {
			p.Notes = append(p.Notes, "names from the missing rundown are [unknown]")
		}
		dst, closeOut, err := openOutput(cmd, out)
		if err != nil {
			st.Close()
			return err
		}
		switch format {
		case "pprof":
			err = report.WritePprof(dst, p)
		case "speedscope":
			err = ss.Write(dst, b, p, st.Name)
		case "folded":
			err = report.WriteFolded(dst, p, report.FoldedOptions{Weight: w, Threads: threads})
		case "html":
			err = report.WriteFlameGraph(dst, p, report.FlameOptions{Weight: w, Threads: threads, Title: st.Name})
		}
		if cerr := closeOut(); err == nil {
			err = cerr
		}
		if err := finish(st, in, err); err != nil {
			return err
		}
		if p.Total == 0 {
			warn("%s has no stack samples (was %s enabled?)", st.Name, nettrace.ProviderSampleProfiler)
		}
		fmt.Fprintln(os.Stderr, profileSummary(p, out))
		return nil
	}
	return c
}

func profileSummary(p *stacks.Profile, out string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d samples (%d managed, %d external", p.Total, p.Managed, p.External)
	if p.Errors > 0 {
		fmt.Fprintf(&b, ", %d error", p.Errors)
	}
	fmt.Fprintf(&b, ") on %d threads over %v; %d method bodies", len(p.Threads),
		time.Duration(p.DurationNanos).Round(time.Millisecond), p.Methods)
	if p.Dropped > 0 {
		fmt.Fprintf(&b, "; %d dropped", p.Dropped)
	}
	if p.Unresolved > 0 {
		fmt.Fprintf(&b, "; %d unresolved frames", p.Unresolved)
	}
	if p.Truncated > 0 {
		fmt.Fprintf(&b, "; %d truncated stacks", p.Truncated)
	}
	if p.FoldedThreads > 0 {
		fmt.Fprintf(&b, "; %d threads past the first %d folded into %s", p.FoldedThreads, stacks.DefaultMaxThreads, stacks.FoldedThreadName)
	}
	if out != "" && out != "-" {
		fmt.Fprintf(&b, "; wrote %s", filepath.Clean(out))
	}
	return b.String()
}
