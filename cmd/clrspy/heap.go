package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/heap"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/report"
	"github.com/clrspy/clrspy/source"
	"github.com/clrspy/clrspy/stacks"
)

func init() { commands = append(commands, newHeapCmd) }

// heapSet: the heap analysis, which reads GC events at level 5
// (AllocationTick with addresses), type names, survival and movement
// ranges and .NET 10 allocation sampling (ignored by older runtimes),
// beside the symbol table (method and module events name the allocation
// stacks). Only --objects and pprof read the object list (objects); the
// tables do not.
func heapSet(maxObjects int, objects bool) (*analysis.Set, *analysis.Ref[*heap.Tracker]) {
	return withSymbols(analysis.Spec{Name: "heap", Keep: heap.Wants, Enable: wants(heap.WantsSession, heap.WantsMovement)},
		func(h *nettrace.Header, _ *stacks.Symbols) *heap.Tracker {
			return heap.New(h, heap.Options{MaxObjects: maxObjects, SkipObjects: !objects})
		})
}

// movementNote is printed when a live session starts: the runtime walks
// every survivor range of every GC to report it.
const movementNote = "note: the GC survival and movement keyword makes every GC slower (the runtime reports each surviving/moved range); measured on the churn workload in docs/PERFORMANCE.md"

func newHeapCmd() *cobra.Command {
	var top, maxObjects int
	var objects bool
	c := &cobra.Command{
		Use:   "heap [FILE|-] [--pid N | --name NAME | -- COMMAND ARGS...]",
		Short: "Sampled objects followed from allocation to death across compacting GCs",
		Long: `heap follows sampled objects (GCAllocationTick v3+ with addresses,
AllocationSampled on .NET 10, GCSampledObjectAllocationHigh/Low) across GCs by
replaying the runtime's movement reports: a compacting GC reports moved address
ranges, a sweeping GC surviving ranges; an object in a condemned generation
that no range covers is dead at that GC. Objects are promoted when they
survive; generation bounds from GCGenerationRange check the model. A
background GC sweeps gen0 and gen1 at its end without reporting ranges: an
object whose address a new sample reuses before the next GC died in that
sweep (counted as swept_by_background_gc).

Per type and per allocation site: sampled objects, estimated bytes allocated,
% surviving one GC, % reaching gen2, % dying in gen2 (the costly mid-life
objects), objects and estimated bytes still alive at the end; an age-at-death
histogram in GCs. Percentages are over sampled objects whose fate a GC decided.

The movement keyword (GCHeapSurvivalAndMovement) makes GCs slower: a live
session says so when it starts.

Output: text (default), --json, or --format pprof (alloc_objects, alloc_space,
inuse_objects, inuse_space; go tool pprof reads it).`,
		Example: `  clrspy heap app.nettrace
  clrspy heap --json app.nettrace | jq '.types[0]'
  clrspy heap --format pprof -o heap.pb.gz --pid 1234 --duration 30s && go tool pprof -top heap.pb.gz`,
	}
	t, o := addSectionFlags(c, 0, report.HeapSection.Formats())
	c.Flags().IntVar(&top, "top", 20, "rows per table in the text report (0: all)")
	c.Flags().BoolVar(&objects, "objects", false, "with --json: list every followed object (type, allocation, GCs survived, death)")
	c.Flags().IntVar(&maxObjects, "max-objects", 100_000, "sampled objects followed at once; past it a weighted reservoir keeps the estimates unbiased (0: no bound)")
	c.RunE = o.runE(func(cmd *cobra.Command, args []string) error {
		if top < 0 {
			return fmt.Errorf("--top must be 0 or more")
		}
		if maxObjects < 0 {
			return fmt.Errorf("--max-objects must be 0 (no bound) or more")
		}
		if objects && o.format != "json" {
			return fmt.Errorf("--objects needs --json")
		}
		if maxObjects == 0 {
			maxObjects = -1 // heap.Options: negative is unbounded
		}
		return runHeap(cmd, t, args, o, top, objects, maxObjects)
	})
	return c
}

func runHeap(cmd *cobra.Command, t *targetFlags, args []string, o *reportFlags, top int, objects bool, maxObjects int) error {
	set, tr := heapSet(maxObjects, objects || o.format == "pprof")
	r, err := runSet(cmd, t, args, set, setRun{keep: true, onOpen: func(st *source.Stream) []analysis.Analyzer {
		if st.Live() {
			notice(movementNote)
		}
		return nil
	}})
	if err != nil {
		return err
	}
	res := tr.Get().Result()
	sym := stacks.SymbolsIn(set).Get()
	h := &report.HeapReport{Result: res, Summary: heap.Summarize(res, sym), Symbols: sym, Top: top, Objects: objects}
	return r.writeAs(cmd, o, report.HeapSection.Writers(r.report(), h))
}
