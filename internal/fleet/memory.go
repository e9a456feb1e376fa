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
	// cpu are the threads' CPU time (procfs.SchedNanos) at each reading
	// over the same span, for clrspy_findings' CPU demand.
	cpu []schedReading
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
			s.AtNs = int64(time.Since(MemEpoch))
			w.add(s, cg)
			return
		}
	}
	s, cg, err := capture.ReadMemory(pid, MemEpoch)
	if err != nil {
		return
	}
	w.statm, w.fullAt = [2]uint64{res, data}, time.Now()
	w.add(s, cg)
}

func near(a, b uint64) bool { return max(a, b)-min(a, b) <= b/memSame }

// schedReading is one reading of a process's threads' CPU time.
type schedReading struct {
	at    time.Time
	nanos int64
}

// addCPU appends a reading of the threads' CPU time, dropping the oldest
// past maxMemorySamples.
func (w *memWatch) addCPU(at time.Time, nanos int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.cpu) == maxMemorySamples {
		w.cpu = append(w.cpu[:0], w.cpu[1:]...)
	}
	w.cpu = append(w.cpu, schedReading{at, nanos})
}

// demandPct is the process's CPU demand as a share of cores over the
// readings kept (the last 5 minutes at the default interval), by triage's
// formula (procfs.DemandPct); -1 with fewer than two readings.
func (w *memWatch) demandPct(cores int) float64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.cpu) < 2 {
		return -1
	}
	a, b := w.cpu[0], w.cpu[len(w.cpu)-1]
	return procfs.DemandPct(a.nanos, b.nanos, b.at.Sub(a.at), cores)
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

// sampleMemory reads every up target's split and its threads' CPU time
// every MemoryInterval, until ctx ends.
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
			t.mem.read(t.hostPid)
			if n, err := procfs.SchedNanos(t.hostPid); err == nil {
				t.mem.addCPU(time.Now(), n)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
