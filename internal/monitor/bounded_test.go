package monitor

import (
	"bufio"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/clrspy/clrspy/internal/tracegen"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/source"
)

// TestBoundedOverLongTrace feeds a long synthetic trace (the stream
// `clrspy gentrace` writes: 1 ms sampler ticks over 64 threads, GCs every
// 20–80 ms, lock contention) through a Monitor with every part on, and
// checks that its state stays within its bounds, that the heap it holds
// does not grow with the stream, and that events do not allocate in steady
// state (only a GC allocates: gcpause's record of it).
func TestBoundedOverLongTrace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "long.nettrace")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	gen, err := tracegen.Large(bw, 64<<20, 7)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	s, err := source.Open(source.Spec{File: path})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const keepGCs, keepSusps = 64, 32
	m := New(s.Header(), Options{CPU: true, CPUWindow: 5 * time.Second, MaxGCs: keepGCs, MaxSuspensions: keepSusps, NoCounters: true})

	var ms runtime.MemStats
	heap := func() uint64 {
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	var (
		n                  int64
		heapAt, mallocsAt  uint64
		gcsAt, eventsAt    int64
		maxStacks, maxIdxs int
	)
	check := func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		nLocks, nStacks := m.lock.an.Len()
		if m.gcs.Len() > keepGCs || m.susps.Len() > keepSusps || m.gc.Open() > 64 ||
			m.gcStopped.n > maxStopIntervals || m.anyStopped.n > maxStopIntervals ||
			nLocks > maxLocks+1 || nStacks > maxLockStacks+2 {
			t.Fatalf("over a bound after %d events: %d GC rows, %d suspension rows, %d open, %d/%d stop intervals, %d locks, %d stacks",
				n, m.gcs.Len(), m.susps.Len(), m.gc.Open(), m.gcStopped.n, m.anyStopped.n, nLocks, nStacks)
		}
		// Intervals older than a minute of the event clock are dropped.
		if m.gcStopped.n > 0 && m.gcStopped.at(0).end < m.now-windowKeep-int64(time.Second) && m.gcStopped.n > 1 {
			t.Fatalf("a stop interval from %d ns kept at %d ns", m.gcStopped.at(0).end, m.now)
		}
		maxStacks = max(maxStacks, len(m.cpu.stks))
		maxIdxs = max(maxIdxs, len(m.cpu.idx[0])+len(m.cpu.idx[1]))
	}
	for {
		ev, err := s.Next()
		if err != nil {
			if err == io.EOF || errors.Is(err, nettrace.ErrTruncated) {
				break
			}
			t.Fatal(err)
		}
		m.Event(ev)
		n++
		if n%200_000 == 0 {
			check()
		}
		if n == gen.Events/3 {
			// Steady state: every stack of the generator's pool has been
			// seen, the rings are full.
			heapAt = heap()
			mallocsAt = ms.Mallocs
			gcsAt = m.gcsResolved()
			eventsAt = n
		}
	}
	check()
	heapEnd := heap()
	mallocs := ms.Mallocs - mallocsAt
	gcs := m.gcsResolved() - gcsAt
	events := n - eventsAt
	snap := m.Snapshot()
	if err := snap.CheckValid(); err != nil {
		t.Error(err)
	}
	t.Logf("%d events (%d GCs, %d samples) over %.0f s of event clock: heap %.1f MB at a third, %.1f MB at the end; %d allocations for %d events and %d GCs (%.2f per GC); %d CPU stacks (max %d)",
		n, gen.GCs, gen.Samples, snap.Session.ElapsedSec, float64(heapAt)/1e6, float64(heapEnd)/1e6, mallocs, events, gcs, float64(mallocs)/float64(max(gcs, 1)), len(m.cpu.stks), maxStacks)
	if n != gen.Events || int64(snap.GC.GCCount) != gen.GCs || snap.Session.ElapsedSec < 90 {
		t.Errorf("%d events, %d GCs, %.0f s; the generator wrote %d events, %d GCs", n, snap.GC.GCCount, snap.Session.ElapsedSec, gen.Events, gen.GCs)
	}
	if len(snap.GCs) != keepGCs || snap.CPU == nil || snap.CPU.Samples == 0 || snap.Locks.Waits == 0 {
		t.Errorf("snapshot: %d GC rows, cpu %+v, %d lock waits", len(snap.GCs), snap.CPU != nil, snap.Locks.Waits)
	}
	// Flat: a third of the way and at the end the monitor holds the same
	// (the rings were full, the stack pool seen); 2 MB covers the map
	// buckets the CPU window's churn leaves behind.
	if heapEnd > heapAt+2<<20 {
		t.Errorf("heap grew from %.1f MB to %.1f MB over the last two thirds", float64(heapAt)/1e6, float64(heapEnd)/1e6)
	}
	// No allocation per event: what is allocated is per GC (gcpause's GC
	// record, its amortised row trims and the rollup's percentile store).
	if float64(mallocs) > 4*float64(gcs)+64 {
		t.Errorf("%d allocations over %d events and %d GCs: more than 4 per GC", mallocs, events, gcs)
	}
}

// gcsResolved counts the GCs that ended (complete or given up) without
// allocating (the test measures allocations).
func (m *Monitor) gcsResolved() int64 {
	return int64(m.resolved[0] + m.resolved[1] + m.resolved[2])
}
