package serve

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/heapgraph"
	"github.com/clrspy/clrspy/internal/fleet"
	"github.com/clrspy/clrspy/internal/metrics"
)

// snapshotMinInterval is the least time between two automatic heap
// snapshots of one target, whatever gen2 does: each is a blocking gen2
// GC in it (a variable for the tests).
var snapshotMinInterval = time.Minute

// heapWatch is a target's state for Config.SnapshotOnGen2Growth: the
// gen2 size the next growth is measured from, the last snapshot's
// per-type table (not its graph: a few entries per type, whatever the
// heap), and the last diff's top growth.
type heapWatch struct {
	mu sync.Mutex
	// ref is the gen2 size after the last snapshot's GC (refSet false:
	// the next GC's gen2 size becomes it).
	ref    uint64
	refSet bool
	// busy: a snapshot is being taken; sawGC: a GC was seen meanwhile
	// (the snapshot's own, whose gen2 size is the new ref).
	busy, sawGC bool
	last        time.Time
	types       map[string]heapgraph.TypeStat // nil: no snapshot yet
	// judge is the default leak watch's (Config.LeakWatch), its
	// configuration set at the first GC (judgeSet).
	judge    leakJudge
	judgeSet bool
}

// watchGC is called for every GC of the target's monitoring session (on
// its goroutine: it never blocks). The first GC seen takes the baseline
// snapshot; then a GC after which gen2 is pct % larger than after the
// last snapshot takes another, diffed with the last one.
func (t *target) watchGC(ctx context.Context, g *gcpause.GC, pct float64) {
	if !g.HasHeapStats {
		return
	}
	gen2 := g.HeapStats.GenerationSize[2]
	w := &t.watch
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.busy:
		w.ref, w.refSet, w.sawGC = gen2, true, true
		return
	case w.types != nil && !w.refSet:
		w.ref, w.refSet = gen2, true
		return
	case time.Since(w.last) < snapshotMinInterval:
		return // a failed snapshot is retried no sooner either
	case w.types != nil && (gen2 <= w.ref || float64(gen2) < float64(w.ref)*(1+pct/100)):
		return
	}
	if !t.snapshotting.busy.CompareAndSwap(false, true) {
		return // a snapshot through /debug/pprof/heap: the next GC will tell
	}
	before := w.ref
	if w.types == nil {
		before = gen2
	}
	w.busy, w.sawGC, w.ref, w.refSet = true, false, gen2, true
	t.d.fleet.Go(func() {
		defer t.snapshotting.busy.Store(false)
		t.autoSnapshot(ctx, before, gen2, pct)
	})
}

// autoSnapshot takes a snapshot for the watch and, when there was one
// before, logs and exports the types that grew most since; false when it
// failed.
func (t *target) autoSnapshot(ctx context.Context, before, gen2 uint64, pct float64) bool {
	d, w := t.d, &t.watch
	_, g, err := d.snapshot(ctx, t)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.busy, w.last = false, time.Now()
	if !w.sawGC {
		// The snapshot's GC was not seen (yet): the next GC's gen2 size
		// is the reference.
		w.refSet = false
	}
	if err != nil {
		if ctx.Err() == nil {
			d.log.Warn("heap snapshot on gen2 growth failed", "pid", t.PidLabel(), "process", t.Name(), "error", fleet.ErrLine(err))
		}
		return false
	}
	if !g.Complete() {
		d.log.Warn("heap snapshot on gen2 growth incomplete: its diff may miss growth", "pid", t.PidLabel(), "process", t.Name())
	}
	types := make(map[string]heapgraph.TypeStat)
	// Own bytes only: no exact retained bytes (a walk of the heap per type).
	for _, ty := range g.TypesWith(heapgraph.TypeOptions{Top: -1, Budget: -1}) {
		types[ty.Type] = ty
	}
	prev := w.types
	w.types = types
	if prev == nil {
		d.log.Info("heap snapshot taken as the baseline of gen2 growth", "pid", t.PidLabel(), "process", t.Name(),
			"gen2_bytes", gen2, "threshold_percent", pct)
		return true
	}
	grown := growthOf(prev, types)
	t.SetValue(metrics.HeapGrowthKey{}, grown)
	top := make([]string, len(grown))
	for i, gr := range grown {
		top[i] = fmt.Sprintf("%s %+d B (%+d objects)", gr.Type, gr.Bytes, int64(types[gr.Type].Count)-int64(prev[gr.Type].Count))
	}
	d.log.Warn("gen2 grew since the last heap snapshot; the types that grew most", "pid", t.PidLabel(), "process", t.Name(),
		"gen2_before_bytes", before, "gen2_bytes", gen2, "top", strings.Join(top, "; "))
	return true
}

// growthOf is the types whose own bytes grew from prev to cur, the
// largest growth first, at most metrics.MaxHeapGrowth.
func growthOf(prev, cur map[string]heapgraph.TypeStat) []metrics.HeapGrowth {
	var out []metrics.HeapGrowth
	for name, a := range cur {
		if d := int64(a.Bytes) - int64(prev[name].Bytes); d > 0 {
			out = append(out, metrics.HeapGrowth{Type: name, Bytes: d})
		}
	}
	slices.SortFunc(out, func(x, y metrics.HeapGrowth) int {
		return cmp.Or(cmp.Compare(y.Bytes, x.Bytes), strings.Compare(x.Type, y.Type))
	})
	if len(out) > metrics.MaxHeapGrowth {
		out = out[:metrics.MaxHeapGrowth]
	}
	return out
}
