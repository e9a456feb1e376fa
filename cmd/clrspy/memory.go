package main

import (
	"errors"
	"fmt"
	"github.com/clrspy/clrspy/memory"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/clrspy/clrspy/capture"
	"github.com/clrspy/clrspy/internal/outfile"
	"github.com/clrspy/clrspy/internal/procfs"
	"github.com/clrspy/clrspy/ipc"
	"github.com/clrspy/clrspy/report"
	"github.com/clrspy/clrspy/source"
	"github.com/clrspy/clrspy/triage"
)

func init() { commands = append(commands, newMemoryCmd) }

type memoryFlags struct {
	pid                int
	name               string
	duration, interval time.Duration
	asJSON             bool
	format             string
	pprofOut           string
	out                string
	images             int
	runtime            bool
	native             bool
	sampleBytes        int64
	seed               uint64
}

func newMemoryCmd() *cobra.Command {
	f := &memoryFlags{}
	c := &cobra.Command{
		Use:   "memory [--pid N | --name NAME | -- COMMAND ARGS...]",
		Short: "Where a process's memory goes: GC heap, runtime, native heap, stacks, images; the cgroup's limit",
		Long: `memory splits the process's resident memory (RSS, from /proc/PID/smaps) into
parts that add up to it exactly, every mapping given to one part:

  gc_heap         the GC's regions (objects, and free space the GC keeps committed)
  gc_bookkeeping  the GC's card table, brick table, mark array (its reservation below the regions)
  jit_code        the runtime's executable memory: JIT-compiled code, stubs
  loader          the runtime's other reservations: loader heaps, writable views of code heaps
  native_heap     malloc: the [heap] and glibc's arenas (Marshal.AllocHGlobal, P/Invoke buffers)
  stacks          thread stacks
  images          mapped files by module (assemblies, R2R code, native libraries, their .bss)
  other           anonymous memory nothing claims (malloc's blocks over its mmap threshold,
                  native libraries' own mappings), shared memory

The GC's reservation is the runtime's largest reserved range with no code in it
(the runtime marks reserved memory not-to-dump; the executable-memory reserve
sits beside its double mappings); its regions begin at its first committed,
region-aligned mapping. Beside the split: the memory cgroup's limit (the
smallest of the process's cgroup and its ancestors', v2 memory.max or v1
memory.limit_in_bytes), usage, headroom and OOM kills.

--duration samples the split every --interval (default 1s) and says which part
grows ("native heap grows 4.0 MiB/s while the GC heap is flat"). Reading smaps
needs the right to read the process's /proc entries (the same user, or root).
Ctrl-C ends a --duration early and reports the samples taken.

--native (with --duration) also follows the process's native allocations,
attached, without a preload: uprobes on its libc's malloc, calloc, realloc
and free (and on the returns of the first three) through perf_event_open,
which needs root or CAP_PERFMON. Allocations are sampled by bytes, once
every --sample-rate bytes on average (an exponential interval, as Go's and
tcmalloc's heap profiles), each sample weighed by 1/p so the estimates are
unbiased; a sampled call's stack is walked with the mixed-mode unwinder,
so the managed caller (the P/Invoke, Marshal.AllocHGlobal's caller) is
named. The report gives the bytes still allocated at the end by stack
(outstanding) and those allocated over the run (allocated).
What it costs the target: while the probes are on, EVERY call of malloc,
calloc, realloc and free traps into the kernel (a breakpoint; the entries
also copy 4 KiB of stack into clrspy's ring), whatever --sample-rate is:
the sampling decision is made by clrspy for each record. Measured in a
2-CPU VM (scripts/native-overhead.sh): 6.3-7 µs of the target's CPU a
malloc/free pair (2.6 µs of it the traps alone), so a thread making
10,000 pairs a second pays 6 % of a core and one making 100,000 is held to
about 64,000 (heaptrack, preloaded at start, costs 0.45 µs a pair there).
The probes are defined in tracefs (uprobe_events, removed at the end); when
it cannot be written they go through the uprobe PMU, which costs more a
call and 80 ms per event to remove, 7 events a thread. Blocks allocated before the probes were on are not seen, nor calls
of threads in the moment between their creation and their probes; records
lost when clrspy falls behind (its CPU taken) are counted in a note, and
the estimates miss them.

--format html writes the report page with the memory section alone: the
split over time as a stacked area chart (gc_heap at the bottom), the
cgroup's limit as a line, and triage's memory finding above it; with
--native also the flame graphs of the outstanding and the allocated
bytes by stack (in KiB, every stack).

--format pprof (with --native) writes the estimates as a gzipped pprof heap
profile instead of the report: sample types inuse_space and inuse_objects
(still allocated at the end, the default view), alloc_space and
alloc_objects (allocated over the run), one sample per stack with the
report's frames (leaf first, managed and native) and the same values as
--json's outstanding and allocated lists, every stack rather than the top
50: go tool pprof -top FILE. --pprof FILE writes the same profile beside the
report (text or --json). --format folded writes the outstanding bytes
as collapsed stacks (root first, ';' between frames) for flamegraph.pl.`,
		Example: `  clrspy memory --pid 1234
  clrspy memory --pid 1234 --duration 30s --json | jq '.growth'
  clrspy memory --name MyService --duration 1m --interval 5s
  clrspy memory --pid 1234 --duration 60s --format html -o memory.html
  clrspy memory --duration 10s -- dotnet app.dll
  clrspy memory --pid 1234 --native --duration 30s --json | jq '.native.outstanding[0]'
  clrspy memory --pid 1234 --native --duration 30s --format pprof -o native.pb.gz && go tool pprof -top native.pb.gz
  clrspy memory --pid 1234 --native --duration 30s --format folded | flamegraph.pl > native.svg`,
		RunE: func(cmd *cobra.Command, args []string) error { return runMemory(cmd, f, args) },
	}
	fl := c.Flags()
	fl.IntVar(&f.pid, "pid", 0, "the process to read")
	fl.StringVar(&f.name, "name", "", "the .NET process with this name")
	fl.DurationVar(&f.duration, "duration", 0, "sample the split for this long (0: one sample)")
	fl.DurationVar(&f.interval, "interval", time.Second, "time between samples with --duration")
	fl.BoolVar(&f.asJSON, "json", false, "print one JSON document (same as --format json)")
	fl.StringVar(&f.format, "format", "text", "output format: text, json, html (the report page's memory section: the split over time as a stacked area chart), or with --native pprof (a heap profile of the native allocations: inuse_space, inuse_objects, alloc_space, alloc_objects) or folded (collapsed stacks of the outstanding bytes)")
	fl.StringVar(&f.pprofOut, "pprof", "", "--native: also write the pprof profile (as --format pprof) to this file, beside the report")
	fl.StringVarP(&f.out, "output", "o", "", "write the report to this file instead of stdout")
	fl.IntVar(&f.images, "images", 10, "text: list this many mapped files, most resident first")
	fl.BoolVar(&f.runtime, "runtime", true, "for a .NET process, also open an EventPipe session: heap addresses to find the GC's reservation by, its GC counters (one sample waits 1.5 s for them)")
	fl.BoolVar(&f.native, "native", false, "also track native allocations with uprobes on libc's allocator (root or CAP_PERFMON; needs --duration; every malloc of the target traps into the kernel while on)")
	fl.Int64Var(&f.sampleBytes, "sample-rate", 512<<10, "--native: the mean number of bytes between sampled allocations, as Go's MemProfileRate (1: every allocation)")
	fl.Uint64Var(&f.seed, "seed", 0, "--native: the sampler's random seed (0: from the clock)")
	markOutput(c, "pprof", "file")
	return c
}

func runMemory(cmd *cobra.Command, f *memoryFlags, args []string) error {
	if f.duration < 0 {
		return fmt.Errorf("--duration %v: want 0 or more", f.duration)
	}
	if f.interval <= 0 {
		return fmt.Errorf("--interval %v: want more than 0", f.interval)
	}
	if f.native && f.duration == 0 {
		return errors.New("--native needs --duration: the allocations are followed for that long")
	}
	if f.sampleBytes < 1 {
		return fmt.Errorf("--sample-rate %d: want 1 or more", f.sampleBytes)
	}
	if f.asJSON {
		if cmd.Flags().Changed("format") && f.format != "json" {
			return fmt.Errorf("--json and --format %s contradict each other", f.format)
		}
		f.format = "json"
	}
	switch f.format {
	case "text", "json":
	case "html":
		if err := refuseTerminal(f.out, "--format html"); err != nil {
			return err
		}
	case "pprof", "folded":
		if !f.native {
			return fmt.Errorf("--format %s needs --native: the profile is of the native allocations", f.format)
		}
		if f.format == "pprof" {
			if err := refuseTerminal(f.out, "--format pprof"); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("unknown --format %q: use text, json, html, pprof or folded", f.format)
	}
	if f.pprofOut != "" && !f.native {
		return errors.New("--pprof needs --native: the profile is of the native allocations")
	}
	if f.pprofOut == "-" {
		return errors.New("--pprof -: give a file (the report goes to standard output; --format pprof writes the profile there)")
	}
	if f.images < 0 {
		return fmt.Errorf("--images %d: want 0 or more", f.images)
	}
	targets := 0
	if f.pid != 0 {
		targets++
	}
	if f.name != "" {
		targets++
	}
	dash := cmd.ArgsLenAtDash()
	if dash >= 0 {
		targets++
		if dash > 0 {
			return fmt.Errorf("unexpected argument %q before --", args[0])
		}
		if len(args) == 0 {
			return errors.New("no command after --")
		}
	} else if len(args) > 0 {
		return fmt.Errorf("unexpected argument %q: memory reads a live process (--pid N, --name NAME or -- COMMAND)", args[0])
	}
	switch {
	case targets == 0:
		return errors.New("memory needs a process: --pid N, --name NAME or -- COMMAND ARGS")
	case targets > 1:
		return errors.New("--pid, --name and -- COMMAND name the process: give one")
	case f.pid < 0:
		return fmt.Errorf("--pid %d: want a process id", f.pid)
	}
	pid := f.pid
	var exited <-chan struct{}
	var prog *capture.Program
	switch {
	case f.name != "":
		p, err := ipc.FindByName(f.name)
		if err != nil {
			return err
		}
		pid = p
	case dash >= 0:
		var err error
		if prog, err = capture.StartProgram(args, os.Stderr); err != nil {
			return err
		}
		defer prog.Stop()
		pid, exited = prog.Pid, prog.Exited
		// Let the runtime come up before the first sample.
		select {
		case <-time.After(min(f.interval, time.Second)):
		case <-exited:
			return fmt.Errorf("%s exited before it could be sampled", args[0])
		}
	}
	if !procfs.Exists(pid) {
		return fmt.Errorf("pid %d: no such process", pid)
	}
	out := f.out
	if out == "" {
		out = "-"
	}
	w, err := createOutput(out, cmd.OutOrStdout(), outputPerm(&source.Stream{Pid: pid}))
	if err != nil {
		return err
	}
	// --pprof's file, opened with the report's so a bad name is said
	// before the run; a failed run leaves neither.
	var pw *outfile.File
	if f.pprofOut != "" {
		if pw, err = createOutput(f.pprofOut, cmd.OutOrStdout(), outputPerm(&source.Stream{Pid: pid})); err != nil {
			return w.Finish(err)
		}
		defer pw.Abort() // nothing once finished
	}
	res, err := capture.RunMemory(pid, capture.MemoryOptions{Duration: f.duration, Interval: f.interval, Runtime: f.runtime, Open: source.Open,
		Native: f.native, SampleBytes: f.sampleBytes, Seed: f.seed, Exited: exited, Notice: notice})
	if err != nil {
		return w.Finish(err)
	}
	if f.format == "html" {
		err = report.WritePage(w, memoryPage(res.Doc, res.NativeAll, res.Samples, res.Cgroup, res.Started))
	} else {
		err = report.WriteMemory(w, f.format, res.Doc, res.NativeAll, res.SpanNs, f.images)
	}
	if err = w.Finish(err); err != nil {
		return err
	}
	if pw != nil {
		if err = pw.Finish(report.WriteMemoryNativePprof(pw, res.NativeAll, res.SpanNs, res.Doc.Partial)); err != nil {
			return err
		}
	}
	if prog != nil && prog.ExitCode() != 0 {
		// The launched program's exit status is clrspy's, as for the
		// other commands.
		return &exitError{code: prog.ExitCode()}
	}
	return nil
}

// memoryPage is the report page of memory's samples ss, taken from
// started: its memory section on the samples' clock, triage's memory
// findings from the same samples and, with --native, the native stacks'
// flame graphs (every stack, native nil without).
func memoryPage(d *report.MemoryDocument, native *report.MemoryNativeJSON, ss []memory.Sample, cg *procfs.CgroupMemory, started time.Time) *report.Page {
	var limit, usage uint64
	if cg != nil {
		limit, usage = cg.Limit, cg.Usage
	}
	facts := &triage.Facts{Target: fmt.Sprintf("--pid %d", d.Pid), WindowSec: float64(ss[len(ss)-1].AtNs-ss[0].AtNs) / 1e9}
	facts.Memory.Split = triage.SplitOf(ss, limit, usage)
	return report.NewPage(report.PageParts{
		Title: fmt.Sprintf("pid %d (%s) memory", d.Pid, d.Process), Input: d.Input, Pid: d.Pid, Start: started,
		FirstNanos: ss[0].AtNs, LastNanos: ss[len(ss)-1].AtNs,
		Memory:   report.PageMemoryOf(ss, 0, limit, usage),
		Findings: triage.Findings(facts),
		Views:    report.NativeFlameViews(native),
	})
}
