package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/clrspy/clrspy/ipc"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/report"
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
  speedscope  JSON for https://www.speedscope.app (one profile per thread)
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
		s, err := tgt.open(cmd, args, profileProviders)
		if err != nil {
			return err
		}
		defer s.Close()
		p, warn, err := profileStream(s.R, s.Name, s.Live, stacks.Options{ManagedOnly: managedOnly, Compat: mode})
		if err != nil {
			return err
		}
		dst, closeOut, err := openOutput(cmd, out)
		if err != nil {
			return err
		}
		switch format {
		case "pprof":
			err = report.WritePprof(dst, p)
		case "speedscope":
			err = report.WriteSpeedscope(dst, p, s.Name)
		case "folded":
			err = report.WriteFolded(dst, p, report.FoldedOptions{Weight: w, Threads: threads})
		case "html":
			err = report.WriteFlameGraph(dst, p, report.FlameOptions{Weight: w, Threads: threads, Title: s.Name})
		}
		err = closeOut(err)
		if err != nil {
			return err
		}
		if warn != "" {
			fmt.Fprintf(os.Stderr, "clrspy: warning: %s\n", warn)
		}
		if p.Total == 0 {
			fmt.Fprintf(os.Stderr, "clrspy: warning: %s has no stack samples (was %s enabled?)\n", s.Name, nettrace.ProviderSampleProfiler)
		}
		fmt.Fprintln(os.Stderr, profileSummary(p, out))
		return nil
	}
	return c
}

// profileStream reads a whole stream into a profile. A truncated stream is
// profiled up to the cut, with a warning.
func profileStream(in io.Reader, name string, live bool, opts stacks.Options) (*stacks.Profile, string, error) {
	pin, stop := withProgress(in, name, inputSize(in))
	defer stop()
	r, err := nettrace.NewReader(pin)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", name, err)
	}
	b := stacks.NewBuilder(r.Header(), opts)
	var names *threadNames
	if live {
		// Events carry no thread names; the OS has them while the threads
		// live, so read them during the session.
		names = watchThreadNames(r.Header().ProcessID)
	}
	var warn string
	endErr, err := readAll(r, name, b.Event)
	if err != nil {
		return nil, "", err
	}
	if endErr != nil {
		warn = fmt.Sprintf("%v (profiled up to the cut; names from the missing rundown are [unknown])", endErr)
	}
	if n, err := b.DecodeErrors(); n > 0 {
		w := fmt.Sprintf("%d events did not decode (first: %v)", n, err)
		if warn != "" {
			warn += "; " + w
		} else {
			warn = w
		}
	}
	if names != nil {
		names.finish()
		b.SetMappings(names.maps)
	}
	p := b.Profile()
	if names != nil {
		names.apply(p)
	}
	return p, warn, nil
}

// threadNames collects /proc/PID/task/TID/comm of a live target, and its
// file mappings (/proc/PID/maps) to name addresses outside known methods.
type threadNames struct {
	mu    sync.Mutex
	pid   int
	names map[uint64]string
	maps  []stacks.Mapping
	stop  chan struct{}
}

func watchThreadNames(pid int) *threadNames {
	t := &threadNames{pid: pid, names: make(map[uint64]string), stop: make(chan struct{})}
	if pid <= 0 {
		return t
	}
	t.scan()
	t.scanMaps()
	go func() {
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		for n := 1; ; n++ {
			select {
			case <-tick.C:
				t.scan()
				if n%4 == 0 {
					t.scanMaps()
				}
			case <-t.stop:
				return
			}
		}
	}()
	return t
}

func (t *threadNames) scan() {
	dir := fmt.Sprintf("/proc/%d/task", t.pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		tid, err := strconv.ParseUint(e.Name(), 10, 64)
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name(), "comm"))
		if err != nil {
			continue
		}
		t.mu.Lock()
		t.names[tid] = strings.TrimSpace(string(b))
		t.mu.Unlock()
	}
}

func (t *threadNames) scanMaps() {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", t.pid))
	if err != nil {
		return
	}
	ms := stacks.ParseProcMaps(string(b))
	t.mu.Lock()
	t.maps = ms
	t.mu.Unlock()
}

// finish stops the watcher after a last look at the process.
func (t *threadNames) finish() {
	if t.pid > 0 {
		close(t.stop)
		t.scan()
		t.scanMaps()
	}
}

// apply names the profile's threads.
func (t *threadNames) apply(p *stacks.Profile) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := range p.Threads {
		if n, ok := t.names[p.Threads[i].ID]; ok {
			p.Threads[i].Name = n
		}
	}
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
	if out != "" && out != "-" {
		fmt.Fprintf(&b, "; wrote %s", filepath.Clean(out))
	}
	return b.String()
}
