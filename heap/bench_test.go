package heap

import (
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/internal/tracetest"
)

// cpuTime is the process's user+system CPU time: on the shared machine
// wall time per op moves with the other engineers' load, CPU time much
// less, so the benchmarks report both.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// remapBench replays b.N GCs over 10^5 tracked objects and 10^4 moved
// ranges: every object is in a condemned generation and moves, alternating
// between two layouts so each GC moves all of them again. With shuffle the
// ranges land in an order unrelated to their old one (compaction into
// other regions), else in the same order (a slide).
func remapBench(b *testing.B, shuffle bool) {
	const objects, ranges = 100_000, 10_000
	const per = objects / ranges // objects per range
	const size = 64
	baseA, baseB := uint64(0x10_0000_0000), uint64(0x20_0000_0000)
	tr := New(nil, Options{})
	for i := range objects {
		tr.Allocate(Alloc{Address: baseA + uint64(i)*size, Size: size, TypeID: 1, EstBytes: size, EstCount: 1})
	}
	// Ranges from layout A to B and back; B leaves a gap after every range
	// so the mapping is not a plain shift.
	slot := make([]int, ranges)
	for r := range slot {
		slot[r] = r
	}
	if shuffle {
		rand.New(rand.NewPCG(1, 2)).Shuffle(ranges, func(i, j int) { slot[i], slot[j] = slot[j], slot[i] })
	}
	ab := make([]clrevents.MovedRange, ranges)
	ba := make([]clrevents.MovedRange, ranges)
	for r := range ranges {
		oldA := baseA + uint64(r*per)*size
		newB := baseB + uint64(slot[r])*(per*size+256)
		ab[r] = clrevents.MovedRange{OldBase: oldA, NewBase: newB, Length: per * size}
		ba[r] = clrevents.MovedRange{OldBase: newB, NewBase: oldA, Length: per * size}
	}
	batch := make([]clrevents.MovedRange, ranges)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	for n := 0; n < b.N; n++ {
		src := ab
		if n%2 == 1 {
			src = ba
		}
		copy(batch, src)
		tr.GCStart(int64(n), uint32(n+1), 2, 0)
		tr.Moved(batch)
		tr.GCEnd(uint32(n + 1))
		tr.RestartEEEnd()
	}
	b.StopTimer()
	b.ReportMetric(float64(cpuTime()-cpu0)/1e6/float64(b.N), "cpu-ms/GC")
	g := tr.lastGC()
	if g.Remapped != objects || g.Died != 0 {
		b.Fatalf("last GC remapped %d died %d", g.Remapped, g.Died)
	}
	b.ReportMetric(float64(objects), "objects/GC")
}

// BenchmarkRemapGC measures one GC's replay with 10^5 tracked objects and
// 10^4 moved ranges sliding in order.
func BenchmarkRemapGC(b *testing.B) { remapBench(b, false) }

// BenchmarkRemapGCShuffled is BenchmarkRemapGC with the ranges' destinations
// in random order.
func BenchmarkRemapGCShuffled(b *testing.B) { remapBench(b, true) }

// BenchmarkAllocate measures following one sample in steady state: the
// reservoir is full (10^4 objects), so samples come in, thin it and leave;
// a GC without ranges every 1,000 samples. allocs/op must be 0.
func BenchmarkAllocate(b *testing.B) {
	tr := New(nil, Options{MaxObjects: 10_000})
	stack := []uint64{0x1000, 0x2000, 0x3000}
	rng := rand.New(rand.NewPCG(3, 4))
	alloc := func(n int) {
		tr.Allocate(Alloc{Ns: int64(n), Address: 0x10_0000_0000 + rng.Uint64N(1<<32)*8, Size: 64, TypeID: 1 + uint64(n%7),
			Type: "T", EstBytes: 100_000, EstCount: 1500, Stack: stack})
		if n%1000 == 999 {
			tr.GCStart(int64(n), uint32(n), 0, 0)
			tr.GCEnd(uint32(n))
			tr.RestartEEEnd()
		}
	}
	for n := range 100_000 {
		alloc(n)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for n := range b.N {
		alloc(n)
	}
}

// BenchmarkReplayObjver4 replays the 478-GC objver4 trace of the
// compatibility suite (35k sampled objects), reading included.
func BenchmarkReplayObjver4(b *testing.B) {
	for range b.N {
		replay(b, tracetest.CompatPath(b, "perfview__eventpipe-dotnetcore3.0-win-x64-objver4.nettrace"))
	}
}
