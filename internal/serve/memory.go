package serve

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
	// statm is the resident and data pages when smaps was last read, at
	// fullAt (read's goroutine only).
	statm  [2]uint64
	fullAt time.Time
}

// smaps is most of serve's own CPU at 10 targets (4 ms of the kernel's
// time per read of a .NET process's smaps, 2026-12-03): a target whose
// resident and data pages moved by at most 1/memSame of themselves since
// the last read repeats that split, for at most memFullEvery.
const (
	memSame      = 256
	memFullEvery = time.Minute
)

// read takes one reading of pid's split: smaps, or the last split again
// while statm says nothing moved.
func (w *memWatch) read(pid int) {
	res, data, err := procfs.Statm(pid)
	if err == nil && time.Since(w.fullAt) < memFullEvery && near(res, w.statm[0]) && near(data, w.statm[1]) {
		w.mu.Lock()
		n, cg := len(w.ss), w.cg
		var s memory.Sample
		if n > 0 {
			s = w.ss[n-1]
		}
		w.mu.Unlock()
		if n > 0 {
			s.AtNs = int64(time.Since(memEpoch))
			w.add(s, cg)
			return
		}
	}
	s, cg, err := capture.ReadMemory(pid, memEpoch)
	if err != nil {
		return
	}
	w.statm, w.fullAt = [2]uint64{res, data}, time.Now()
	w.add(s, cg)
}

func near(a, b uint64) bool { return max(a, b)-min(a, b) <= b/memSame }

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

// memEpoch: samples' AtNs count from the daemon's start (Growths and the
// judgement use differences only).
var memEpoch = time.Now()

// sampleMemory reads every up target's split every MemoryInterval, until
// ctx ends.
func (d *Daemon) sampleMemory(ctx context.Context) {
	iv := d.cfg.memoryInterval()
	if iv < 0 {
		return
	}
	tick := time.NewTicker(iv)
	defer tick.Stop()
	for {
		d.mu.Lock()
		var ts []*target
		for _, t := range d.targets {
			if t.up && t.hostPid > 0 {
				ts = append(ts, t)
			}
		}
		d.mu.Unlock()
		for _, t := range ts {
			t.mem.read(t.hostPid)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
