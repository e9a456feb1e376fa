package monitor

import (
	"bufio"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/internal/tracegen"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/source"
	"github.com/clrspy/clrspy/stacks"
)

// benchTrace is a synthetic trace file (gentrace's stream: 1 ms sampler
// ticks over 64 threads, GCs every 20-80 ms, contention), written once.
// Benchmarks read it through the reader, as a live session would, and
// BenchmarkRead times the reader alone: the monitor's cost per event is
// the difference (ratios measured in the same run).
var benchTrace = sync.OnceValues(func() (string, error) {
	// One file for every run (same seed, same bytes), not one per run.
	path := filepath.Join(os.TempDir(), "clrspy-monitor-bench-seed3-32MiB.nettrace")
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	f, err := os.CreateTemp(os.TempDir(), "clrspy-monitor-bench-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(f.Name())
	bw := bufio.NewWriterSize(f, 1<<20)
	if _, err := tracegen.Large(bw, 32<<20, 3); err != nil {
		return "", err
	}
	if err := bw.Flush(); err != nil {
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	return path, os.Rename(f.Name(), path)
})

// feed reads the trace into fn, and returns the number of events.
func feed(b *testing.B, fn func(hdr *nettrace.Header) func(*nettrace.Event)) int {
	path, err := benchTrace()
	if err != nil {
		b.Fatal(err)
	}
	s, err := source.Open(source.Spec{File: path})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ev := fn(s.Header())
	n := 0
	for {
		e, err := s.Next()
		if err != nil {
			if err == io.EOF || errors.Is(err, nettrace.ErrTruncated) {
				return n
			}
			b.Fatal(err)
		}
		ev(e)
		n++
	}
}

func benchFeed(b *testing.B, fn func(hdr *nettrace.Header) func(*nettrace.Event)) {
	if _, err := benchTrace(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	n := 0
	for i := 0; i < b.N; i++ {
		n += feed(b, fn)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/event")
}

// BenchmarkRead is the reader alone: the baseline.
func BenchmarkRead(b *testing.B) {
	benchFeed(b, func(*nettrace.Header) func(*nettrace.Event) { return func(*nettrace.Event) {} })
}

func benchMonitor(b *testing.B, opts Options) {
	benchFeed(b, func(hdr *nettrace.Header) func(*nettrace.Event) { return New(hdr, opts).Event })
}

// BenchmarkMonitorGC: GCs, suspensions, locks (what serve runs; counters
// are a few events a second).
func BenchmarkMonitorGC(b *testing.B) { benchMonitor(b, Options{NoCounters: true}) }

// BenchmarkMonitorCPU adds the 10 s CPU window (what top --cpu runs).
func BenchmarkMonitorCPU(b *testing.B) {
	benchMonitor(b, Options{NoCounters: true, CPU: true, CPUWindow: 10 * time.Second})
}

// BenchmarkMonitorCallbacks adds the GC and suspension callbacks.
func BenchmarkMonitorCallbacks(b *testing.B) {
	var n int
	benchMonitor(b, Options{NoCounters: true, OnGC: func(*gcpause.GC) { n++ }, OnSuspension: func(*gcpause.Suspension) { n++ }})
}

// BenchmarkSnapshot: one snapshot of a monitor that has read the whole
// trace (256 GC rows; with cpu, a 10 s window over the generator's 6000
// random stacks, a worst case: real stacks share their callers).
func BenchmarkSnapshot(b *testing.B) {
	for _, cpu := range []bool{false, true} {
		name := "gc"
		if cpu {
			name = "cpu"
		}
		b.Run(name, func(b *testing.B) {
			var m *Monitor
			feed(b, func(hdr *nettrace.Header) func(*nettrace.Event) {
				m = New(hdr, Options{NoCounters: true, CPU: cpu, CPUWindow: 10 * time.Second})
				return m.Event
			})
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				m.Snapshot()
			}
		})
	}
}

// BenchmarkCPUSample is the CPU window's cost per sample alone: 3000
// stacks of 4 to 64 frames, hit in turn, the clock moving 1 ms per 30
// samples (the generator's shape).
func BenchmarkCPUSample(b *testing.B) {
	hdr := &nettrace.Header{QPCFrequency: 1e9, PointerSize: 8}
	w := newCPUWindow(hdr, stacks.NewSymbols(hdr), 10)
	stks := make([][]uint64, 3000)
	x := uint64(1)
	for i := range stks {
		x = x*6364136223846793005 + 1442695040888963407
		d := 4 + int(x>>58)
		for j := 0; j < d; j++ {
			x = x*6364136223846793005 + 1442695040888963407
			stks[i] = append(stks[i], 0x7f0000100000+x>>40)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w.sample(stks[i%len(stks)], i%7 == 0, int64(i/30)*1e6)
	}
}
