package fleet

import (
	"context"
	"sync"
	"time"

	"github.com/clrspy/clrspy/capture"
	"github.com/clrspy/clrspy/internal/procfs"
	"github.com/clrspy/clrspy/memory"
)

// maxMemorySamples bounds the splits kept per target: at the default
// interval, the last 5 minutes (the trend clrspy_findings judges).
const maxMemorySamples = 30

// memWatch is a target's memory split, read every Config.MemoryInterval
// from its /proc (package memory's split of smaps) with its cgroup's
// figures; the metrics export the latest, clrspy_findings judges them all.
type memWatch struct {
	mu sync.Mutex
	ss []memory.Sample
	cg *procfs.CgroupMemory
}

// add appends a sample, dropping the oldest past maxMemorySamples.
func (w *memWatch) add(s memory.Sample, cg *procfs.CgroupMemory) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.ss) == maxMemorySamples {
		w.ss = append(w.ss[:0], w.ss[1:]...)
	}
	w.ss = append(w.ss, s)
	w.cg = cg
}

// get copies the samples and the latest cgroup reading.
func (w *memWatch) get() ([]memory.Sample, *procfs.CgroupMemory) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]memory.Sample(nil), w.ss...), w.cg
}

// MemEpoch: samples' AtNs count from the fleet's start (Growths and the
// judgement use differences only).
var MemEpoch = time.Now()

// sampleMemory reads every up target's split every MemoryInterval, until
// ctx ends.
func (f *Fleet) sampleMemory(ctx context.Context) {
	iv := f.cfg.memoryInterval()
	if iv < 0 {
		return
	}
	tick := time.NewTicker(iv)
	defer tick.Stop()
	for {
		f.mu.Lock()
		var ts []*Source
		for _, t := range f.targets {
			if t.up && t.hostPid > 0 {
				ts = append(ts, t)
			}
		}
		f.mu.Unlock()
		for _, t := range ts {
			if s, cg, err := capture.ReadMemory(t.hostPid, MemEpoch); err == nil {
				t.mem.add(s, cg)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
