package main

import (
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/clrspy/clrspy/capture"
	"github.com/clrspy/clrspy/heapgraph"
	"github.com/clrspy/clrspy/internal/devprof"
	"github.com/clrspy/clrspy/report"
	"github.com/clrspy/clrspy/source"
)

func init() { commands = append(commands, newSnapshotCmd) }

type snapshotOptions struct {
	reportFlags
	diff      bool
	why       string
	tree, top int
	width     int
	save      string
	after     time.Duration
	timeout   time.Duration
	maxMemory string
	budget    int64 // --max-memory in bytes (0: not given)
}

func newSnapshotCmd() *cobra.Command {
	var o snapshotOptions
	c := &cobra.Command{
		Use:   "snapshot [FILE|-] [--pid N | --name NAME | -- COMMAND ARGS...] | --diff OLD NEW",
		Short: "A heap snapshot: what keeps memory alive (retained sizes, paths from roots, diffs)",
		Long: `snapshot takes (or reads) a heap snapshot: the runtime, asked by an EventPipe
session with the GCHeapCollect and GCHeapDump keywords, induces one blocking
gen2 GC and describes every live object, reference and GC root during it. The
session ends as soon as that GC ends. The GC's pause, walk included, is the
snapshot's cost to the target; the report gives it.

Per type: objects, own bytes and retained bytes: the bytes of the objects only
objects of the type keep alive, each counted once (what the roots no longer
reach once every object of the type is gone: one walk of the heap per type).
It is exact for the top 30 types by the dominator tree's lower bound and by own
bytes, for --why's types, and for more while 2 s last; the others show that
lower bound (the union of the dominator subtrees of the type's objects, over a
virtual root joined to every GC root), marked ">=" (retained_exact false).
Before a live snapshot clrspy opens and closes a short session without the
Type keyword, so the runtime names every type even when another session
(clrspy serve or top, dotnet-counters) is open on the process; when one with
the Type keyword on keeps types unnamed, the report says so (partial).
--why TYPE (or 0xADDRESS): the shortest paths from roots to those objects,
grouped by the sequence of types along the path, each with its root (a static
field as Class.Field, a GC handle, a stack frame's method, the finalizer queue)
and the objects' count and bytes. A run of more than 3 objects of one type in a
row (a linked list's nodes, a chain) is one step, "TYPE ×4+", so a million-node
list is a few paths, not a million; a path of more than 24 steps shows its 12
first and 12 last around "...". The runtime gives a static root's field and
its object's type, not its class: the class comes from the metadata of the
target's module files (read from disk; a field several classes declare with
the same type, or a module not found, keeps the field's name alone). --tree N: the dominator tree N levels deep.
--diff OLD NEW: per type count, bytes and retained deltas between two
snapshots of one process, the dominators whose retained bytes grew most
(matched by their path from a root: addresses change) and leak suspects
(types that grew and are kept through one path).

Lost events never give a silent partial graph: gaps in the heap-dump events,
missing references and references to objects never described make the
report partial (complete false, one warning line). The runtime's frozen
string literals and RuntimeType objects, which no reported root reaches, are
counted as unrooted.

Sources: a live process (--pid, --name; or -- COMMAND, snapshotted --after
its start and then sent SIGTERM), or a .nettrace holding a heap dump
(--save, clrspy record --profile gcdump, or dotnet-trace with the keywords).
Live sessions use a 1024 MB runtime-side buffer unless --buffer-mb says
otherwise (the heap dump is one burst of events).
A .gcdump file (dotnet-gcdump, dotnet-monitor, PerfView: PerfView's
serialized memory graph) is read too: its root pseudo-nodes become roots of
the same kinds; its type names are PerfView's ("Dictionary<K,V>" style).
-o FILE.gcdump writes the snapshot in that format (dotnet-gcdump report and
PerfView read it) instead of a report.

Memory: the graph's arrays (about 60 bytes per object) live outside the Go
heap, each freed when its phase ends. From 2 M objects each long-lived one is
parked in an unlinked temporary file in $TMPDIR once built, so a phase keeps
only what it touches resident (about 30 bytes per object at the peak). They
spill whole when the graph would not fit (building and analysing it needing
more than half the available memory), or always with --max-memory SIZE,
which then keeps clrspy's resident memory near SIZE.

Output: text (top types by retained bytes), --json, or --format pprof (a heap
profile whose stacks are retention paths from the root kind down to the
type: go tool pprof -http draws who keeps memory; -diff_base compares two).`,
		Example: `  clrspy snapshot --pid 4242
  clrspy snapshot --pid 4242 --why MyApp.Session
  clrspy snapshot --json app-heap.nettrace | jq '.types[0]'
  clrspy snapshot --why MyApp.Session dump.gcdump
  clrspy snapshot --pid 4242 -o app.gcdump
  clrspy snapshot --pid 4242 --save before.nettrace    # later the same with after.nettrace
  clrspy snapshot --diff before.nettrace after.nettrace
  clrspy snapshot --format pprof -o heap.pb.gz --pid 4242 && go tool pprof -http : heap.pb.gz`,
	}
	t := addReadFlags(c, 1)
	f := c.Flags()
	o.reportFlags.add(c, "text, json or pprof", "write the report to this file instead of stdout (FILE.gcdump: the snapshot itself, in PerfView's format)")
	f.StringVar(&o.why, "why", "", "why are objects of this type (the runtime's full name, the readable one such as 'Dictionary<Int64,Session>', or its last part) or at this 0xADDRESS alive: shortest paths from roots")
	f.IntVar(&o.tree, "tree", 0, "print the dominator tree this many levels deep (0: no tree)")
	f.IntVar(&o.width, "tree-width", 10, "with --tree: children shown per node, the largest by retained bytes")
	f.IntVar(&o.top, "top", 30, "types listed (0: all)")
	f.StringVar(&o.save, "save", "", "live sessions: also save the snapshot's events to this .nettrace file (for a later --diff)")
	f.BoolVar(&o.diff, "diff", false, "compare two snapshots: --diff OLD NEW (trace or .gcdump files)")
	f.DurationVar(&o.after, "after", 2*time.Second, "with -- COMMAND: take the snapshot this long after the start")
	f.DurationVar(&o.timeout, "timeout", capture.SnapshotTimeout, "live sessions: give up when no heap dump has ended after this long")
	f.StringVar(&o.maxMemory, "max-memory", "", "bound clrspy's own memory for large heaps: SIZE in MiB (256) or with a unit (256MiB, 1GiB), at least 16 MiB; the graph's arrays spill to unlinked temporary files in $TMPDIR and their pages go back to the page cache whenever the resident memory passes SIZE (a .gcdump file is mapped, its pages handed back too); what the Go heap holds (type names, roots, the stream's buffers) is the floor, see docs/SECURITY.md")
	c.RunE = o.reportFlags.runE(func(cmd *cobra.Command, args []string) error {
		if !cmd.Flags().Changed("buffer-mb") {
			// A heap dump is one burst of events as large as the heap's
			// graph: the buffer dotnet-gcdump asks for, so that a reader
			// that falls behind loses nothing.
			t.bufferMB = capture.SnapshotBufferMB
		}
		switch {
		case o.tree < 0 || o.top < 0 || o.width < 1:
			return fmt.Errorf("--tree and --top must be 0 or more, --tree-width 1 or more")
		case o.tree > 64:
			return fmt.Errorf("--tree %d: at most 64 levels (the text would be unreadable long before)", o.tree)
		case isGcdump(o.out) && (o.format != "text" || cmd.Flags().Changed("format")):
			return fmt.Errorf("-o %s writes a .gcdump: --json and --format do not apply", o.out)
		case o.after < 0 || o.timeout <= 0:
			return fmt.Errorf("--after must not be negative and --timeout must be positive")
		}
		if o.maxMemory != "" {
			// A plain number is MiB, as the help says.
			spec := o.maxMemory
			if _, err := strconv.ParseUint(spec, 10, 32); err == nil {
				spec += "MiB"
			}
			n, err := parseSize(spec)
			if err != nil || n < 16<<20 {
				return fmt.Errorf("--max-memory %s: want a size of at least 16MiB, e.g. 256MiB", o.maxMemory)
			}
			// No Go memory limit: what is in the Go heap (the stream's
			// buffers, names, roots) is live, and a limit below it would
			// keep the collector running for nothing.
			o.budget = n
		}
		if o.diff {
			return runSnapshotDiff(cmd, t, args, o)
		}
		return runSnapshot(cmd, t, args, o)
	})
	return c
}

// isGcdump says whether path names a .gcdump file (PerfView's format).
func isGcdump(path string) bool { return capture.IsGCDumpName(path) }

// readGcdump reads a .gcdump file into a graph, with the input's
// description (a file: nothing is lost by the reader; what the graph
// misses says the graph).
func readGcdump(path string) (report.Input, *heapgraph.Graph, error) {
	return capture.ReadGCDump(path, inputStdin(), 0)
}

func runSnapshot(cmd *cobra.Command, t *targetFlags, args []string, o snapshotOptions) error {
	if cmd.ArgsLenAtDash() >= 0 {
		return launchSnapshot(cmd, t, args, o)
	}
	if len(args) == 1 && !t.live(cmd) && isGcdumpInput(args[0]) {
		in, g, err := capture.ReadGCDump(args[0], inputStdin(), o.budget)
		if err != nil {
			return err
		}
		if err := writeSnapshot(cmd, nil, in, g, o); err != nil {
			return err
		}
		if !g.Complete() {
			warn("%s: the heap snapshot is incomplete (see the report)", args[0])
		}
		return nil
	}
	spec, err := t.spec(cmd, args, capture.SnapshotProviders())
	if err != nil {
		return err
	}
	return snapshotSpec(cmd, spec, o)
}

func snapshotSpec(cmd *cobra.Command, spec source.Spec, o snapshotOptions) error {
	var st *source.Stream
	job := capture.NewSnapshot(func() { st.Stop() })
	spec.Keep = job.Set().Keep()
	live := spec.File == ""
	if live && spec.Duration == 0 {
		spec.Duration = o.timeout
	}
	var saved *capture.Tee
	if o.save != "" {
		if !live {
			return fmt.Errorf("--save applies to live sessions (the trace file is the snapshot)")
		}
		// Written beside the name and renamed when the session ends,
		// as record does: never a partial FILE.
		var err error
		if saved, err = capture.NewTee(&spec, o.save, nil, 0o600); err != nil {
			return err
		}
		defer saved.Abort() // a no-op once closed
	}
	st, stopWatch, err := openTarget(spec)
	if err != nil {
		return err
	}
	// One snapshot per command: its arrays are mapped outside the Go heap
	// (freed at exit).
	job.Start(st.Header(), capture.Memory{Mapped: true, Budget: o.budget}, nil)
	if live {
		notice("the snapshot induces a blocking gen2 GC in " + st.Name + "; its pause is reported")
	}
	in, err := run(st, stopWatch, job.Set())
	devprof.Phase("read")
	if err != nil {
		st.Close()
		return err
	}
	if saved != nil {
		if _, err := saved.Drain(st); err != nil {
			return err
		}
		if err := saved.Close(st.End()); err != nil {
			st.Close()
			return err
		}
	}
	// finish closes the stream again, a no-op.
	g, err := job.Graph(st, st.Pid, devprof.Phase)
	devprof.Phase("graph")
	if err != nil {
		return fmt.Errorf("%s: %w", st.Name, err)
	}
	err = writeSnapshot(cmd, st, in, g, o)
	devprof.Phase("report")
	if !g.Complete() {
		in.Partial = append(in.Partial, "the heap snapshot is incomplete (see the report)")
	}
	if l := report.SnapshotUnnamed(g); l != "" {
		in.Partial = append(in.Partial, l)
	}
	return finish(st, in, err)
}

// writeSnapshot writes the report of one snapshot.
// st is the live stream the snapshot came from (nil for files): a report
// on another user's process is written for clrspy's user alone.
func writeSnapshot(cmd *cobra.Command, st *source.Stream, in report.Input, g *heapgraph.Graph, o snapshotOptions) error {
	ro := report.SnapshotOptions{Top: o.top, Why: o.why, TreeDepth: o.tree, TreeWidth: o.width}
	if o.why != "" {
		var err error
		if ro.WhyMatcher, err = g.Matcher(o.why); err != nil {
			return err
		}
	}
	w, closeOut, err := openOutput(cmd, st, o.out)
	if err != nil {
		return err
	}
	format := o.format
	if isGcdump(o.out) {
		format = "gcdump"
	}
	// The dominators first (the report would compute them anyway), so
	// that $CLRSPY_PHASES times them apart from the types' exact retained
	// bytes.
	return closeOut(report.WriteSnapshot(w, in, g, format, ro, devprof.Phase))
}

// launchSnapshot starts COMMAND, waits --after, snapshots it by pid, then
// sends it SIGTERM and waits for it. (A launch under a session from the
// first instruction would induce the snapshot's GC at startup.)
func launchSnapshot(cmd *cobra.Command, t *targetFlags, args []string, o snapshotOptions) error {
	if cmd.ArgsLenAtDash() > 0 {
		return fmt.Errorf("unexpected argument %q before --", args[0])
	}
	if len(args) == 0 {
		return fmt.Errorf("no command after --")
	}
	if t.pid != 0 || t.name != "" {
		return fmt.Errorf("give either a command after -- or --pid/--name, not both")
	}
	pid, end, err := startAfter(args, o.after)
	if err != nil {
		return err
	}
	defer end()
	spec := source.Spec{Pid: pid, Duration: t.duration, BufferMB: t.bufferMB, Providers: capture.SnapshotProviders(), Notice: notice}
	return snapshotSpec(cmd, spec, o)
}

// readSnapshotFile builds the graph of a trace file or a .gcdump.
func readSnapshotFile(path string, threads int, budget int64) (report.Input, *heapgraph.Graph, error) {
	return capture.ReadSnapshotFile(path, inputStdin(), isGcdumpInput(path), threads, budget)
}

func runSnapshotDiff(cmd *cobra.Command, t *targetFlags, args []string, o snapshotOptions) error {
	if t.live(cmd) {
		return fmt.Errorf("--diff compares two trace files: --diff OLD NEW (take them with clrspy record --profile gcdump)")
	}
	if len(args) != 2 {
		return fmt.Errorf("--diff needs two trace files: --diff OLD NEW (got %d arguments)", len(args))
	}
	if o.format == "pprof" {
		return fmt.Errorf("--diff gives text or --json; for pprof, write each snapshot with --format pprof and use go tool pprof -diff_base")
	}
	if o.why != "" || o.tree > 0 {
		return fmt.Errorf("--why and --tree apply to one snapshot, not to --diff")
	}
	threads, err := readerThreads(t.threads)
	if err != nil {
		return err
	}
	bin, old, err := readSnapshotFile(args[0], threads, o.budget)
	if err != nil {
		return err
	}
	ain, cur, err := readSnapshotFile(args[1], threads, o.budget)
	if err != nil {
		return err
	}
	doc := report.NewSnapshotDiffDocument(bin, ain, old, cur, heapgraph.Compare(old, cur), o.top)
	w, closeOut, err := openOutput(cmd, nil, o.out)
	if err != nil {
		return err
	}
	if o.format == "json" {
		err = report.WriteSnapshotJSON(w, doc)
	} else {
		err = report.WriteSnapshotDiffText(w, doc)
	}
	if err = closeOut(err); err != nil {
		return err
	}
	for _, p := range doc.Partial {
		warn("%s", p)
	}
	return nil
}
