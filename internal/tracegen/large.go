package tracegen

import (
	"io"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/nettrace"
)

// LargeStats says what Large wrote, for tests to check readers against.
type LargeStats struct {
	Events          int64
	EventsWithStack int64 // events with a non-empty stack
	Samples         int64 // SampleProfiler ThreadSample events
	GCs             int64 // GCStart events
	AllocTicks      int64 // GC/AllocationTick events
	Contentions     int64 // Contention/Start events (each has its Stop)
	ContentionNanos int64 // sum of the Stops' DurationNs
	Bytes           int64 // stream bytes
}

// LargeSampler is the sample profiler's thread in a Large trace.
const LargeSampler = 900

// Large streams a synthetic but realistic NetTrace V4 trace of about
// approxBytes bytes to w, with the runtime's payload layouts: method loads
// (MethodLoadVerbose) for a set of fake JIT'd methods, then 1 ms
// sample-profiler ticks (each a SuspendEE/RestartEE pair for reason
// SuspendOther on the sampler thread, then ThreadSample events for a
// random subset of 64 threads, with stacks made of those methods),
// allocation ticks of a dozen types, lock contention (ContentionStart, then
// ContentionStop with the wait's duration) on 16 locks, and GCs every 20–80
// ms with the runtime's triggered/suspend/start/end/heap-stats/restart
// sequence. Memory use does not depend on the size: events go out block by
// block, each built in one reused buffer. The same seed gives the same
// bytes.
func Large(w io.Writer, approxBytes int64, seed uint64) (LargeStats, error) {
	g := newLarge(seed)
	h := nettrace.Header{
		SyncTimeUTC:             time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.UTC),
		SyncTimeQPC:             1_000_000_000,
		QPCFrequency:            1_000_000_000,
		PointerSize:             8,
		ProcessID:               4242,
		NumberOfProcessors:      8,
		ExpectedCPUSamplingRate: 1_000_000,
	}
	wr, err := nettrace.NewWriter(w, h, nettrace.WriterOptions{})
	if err != nil {
		return LargeStats{}, err
	}
	g.w = wr
	g.now = h.SyncTimeQPC + 1000
	g.methodLoads()
	for wr.Offset() < approxBytes && g.err == nil {
		g.tick()
	}
	if g.err != nil {
		return g.st, g.err
	}
	if err := wr.Close(); err != nil {
		return g.st, err
	}
	g.st.Bytes = wr.Offset()
	return g.st, nil
}

type large struct {
	w       *nettrace.Writer
	err     error
	rng     *rand.Rand
	st      LargeStats
	now     int64
	ev      nettrace.Event
	buf     []byte
	methods []uint64 // method start addresses
	stacks  [][]uint64
	threads []uint64
	gcCount uint32
	nextGC  int64
	meta    *Trace // the metadata, from clrevents' spec table
	types   []uint64
	locks   []uint64
}

// largeTypes are the allocated types, the first most often.
var largeTypes = [...]string{"System.Byte[]", "System.String", "System.Object[]", "System.Char[]",
	"System.Collections.Generic.List`1[System.Int32]", "System.Int32[]", "Synthetic.Namespace.Order",
	"Synthetic.Namespace.Customer", "System.Text.StringBuilder", "System.Collections.Generic.Dictionary`2[System.String,System.Object]",
	"System.Threading.Tasks.Task", "System.Action"}

func newLarge(seed uint64) *large {
	g := &large{rng: rand.New(rand.NewPCG(seed, seed^0x9E3779B97F4A7C15)), meta: New()}
	for i := range largeTypes {
		g.types = append(g.types, uint64(0x7f0000b00000+i*0x100))
	}
	for i := 0; i < 16; i++ {
		g.locks = append(g.locks, uint64(0x7e0000100000+i*0x80))
	}
	for i := 0; i < 64; i++ {
		g.threads = append(g.threads, uint64(10000+i*7))
	}
	for i := 0; i < 400; i++ {
		g.methods = append(g.methods, 0x7f0000100000+uint64(i)*0x400)
	}
	// A fixed pool of stacks keeps interning realistic: hot paths repeat.
	for i := 0; i < 3000; i++ {
		d := 4 + g.rng.IntN(60)
		st := make([]uint64, d)
		for j := range st {
			st[j] = g.methods[g.rng.IntN(len(g.methods))] + uint64(16+g.rng.IntN(0x3e0))
		}
		g.stacks = append(g.stacks, st)
	}
	return g
}

// emit writes the event of id (runtime provider) built in g.buf, 1–2,000
// ns after the last one.
func (g *large) emit(id uint32, thread, capture uint64, stack []uint64) {
	g.emitAfter(g.rt(id), thread, capture, stack, 1+int64(g.rng.IntN(2000)))
}

func (g *large) rt(id uint32) *nettrace.Metadata {
	return g.meta.meta(nettrace.Runtime, id, version(nettrace.Runtime, id))
}

// emitAfter writes the event built in g.buf, d ns after the last one.
func (g *large) emitAfter(m *nettrace.Metadata, thread, capture uint64, stack []uint64, d int64) {
	g.now += d
	ev := &g.ev
	ev.Meta = m
	ev.Timestamp = g.now
	ev.ThreadID = thread
	ev.CaptureThreadID = capture
	ev.ProcessorNumber = uint32(capture % 8)
	ev.SequenceNumber = 0
	ev.Stack = stack
	ev.Payload = g.buf
	err := g.w.WriteEvent(ev)
	g.buf = g.buf[:0]
	if err != nil {
		g.err = err
		return
	}
	g.st.Events++
	if len(stack) > 0 {
		g.st.EventsWithStack++
	}
}

func (g *large) methodLoads() {
	for i, start := range g.methods {
		g.buf = AppendMethodVerbose(g.buf, clrevents.Method{
			MethodID: 0x7f0000900000 + uint64(i)*0x40, ModuleID: 0x7f0000a00000, StartAddress: start,
			Size: 0x3f0, Token: 0x06000000 + uint32(i),
			Namespace: "Synthetic.Namespace.Type" + string(rune('A'+i%26)), Name: "Method" + strconv.Itoa(i), Signature: "void  (int32)",
		})
		g.emit(clrevents.IDMethodLoadVerbose, g.threads[0], g.threads[0], nil)
	}
}

func (g *large) stack() []uint64 { return g.stacks[g.rng.IntN(len(g.stacks))] }

// tick writes one millisecond of activity.
func (g *large) tick() {
	// The sampler suspends the runtime (reason SuspendOther, no GC count,
	// as the runtime writes it), then writes a sample for each thread it
	// walked.
	g.buf = AppendSuspendEEBegin(g.buf, clrevents.GCSuspendEEBegin{Reason: clrevents.SuspendOther, Count: 0xFFFFFFFF})
	g.emit(clrevents.IDGCSuspendEEBegin, LargeSampler, LargeSampler, nil)
	g.buf = AppendClrInstance(g.buf)
	g.emit(clrevents.IDGCSuspendEEEnd, LargeSampler, LargeSampler, nil)
	sample := g.meta.meta(nettrace.SampleProfiler, clrevents.IDThreadSample, 0)
	n := 8 + g.rng.IntN(24)
	for i := 0; i < n; i++ {
		t := g.threads[g.rng.IntN(len(g.threads))]
		g.buf = AppendThreadSample(g.buf, clrevents.ThreadSample{Type: clrevents.SampleType(1 + g.rng.IntN(2))})
		g.emitAfter(sample, t, LargeSampler, g.stack(), 1+int64(g.rng.IntN(2000)))
		g.st.Samples++
	}
	g.buf = AppendClrInstance(g.buf)
	g.emit(clrevents.IDGCRestartEEBegin, LargeSampler, LargeSampler, nil)
	g.buf = AppendClrInstance(g.buf)
	g.emit(clrevents.IDGCRestartEEEnd, LargeSampler, LargeSampler, nil)
	// Allocation ticks.
	for i := g.rng.IntN(4); i > 0; i-- {
		t := g.threads[g.rng.IntN(len(g.threads))]
		ty := g.rng.IntN(len(largeTypes))
		if g.rng.IntN(2) == 0 {
			ty = 0
		}
		amount := 100_000 + uint64(g.rng.IntN(5000))
		g.buf = AppendAllocationTick(g.buf, clrevents.AllocationTick{
			AllocationAmount: amount,
			AllocationKind:   uint32(g.rng.IntN(10) / 9), // small, now and then large
			TypeID:           g.types[ty], TypeName: largeTypes[ty],
			Address:    0x7e0000000000 + uint64(g.rng.Uint32())&^7,
			ObjectSize: 24 + uint64(g.rng.IntN(100000)),
		})
		g.emit(clrevents.IDGCAllocationTick, t, t, g.stack())
		g.st.AllocTicks++
	}
	// Lock contention now and then: a start, then the stop on the same
	// thread once the wait is over, with its duration.
	if g.rng.IntN(10) == 0 {
		t := g.threads[1+g.rng.IntN(len(g.threads)-1)]
		lk := g.rng.IntN(len(g.locks))
		owner := g.threads[(lk*5)%len(g.threads)]
		g.buf = AppendContentionStart(g.buf, clrevents.ContentionStart{
			Flags: clrevents.ContentionManaged, LockID: g.locks[lk], AssociatedObjectID: g.locks[lk] + 0x40, LockOwnerThreadID: owner,
		})
		g.emit(clrevents.IDContentionStart, t, t, g.stack())
		wait := int64(1_000 + g.rng.IntN(400_000))
		start := g.now
		g.now += wait
		d := float64(g.now + 1 - start) // emitAfter adds 1 tick
		g.buf = AppendContentionStop(g.buf, clrevents.ContentionStop{Flags: clrevents.ContentionManaged, DurationNs: d})
		g.emitAfter(g.rt(clrevents.IDContentionStop), t, t, nil, 1)
		g.st.Contentions++
		g.st.ContentionNanos += int64(d)
	}
	if g.now >= g.nextGC {
		g.gc()
		g.nextGC = g.now + 20_000_000 + int64(g.rng.IntN(60_000_000))
	}
	g.now += 1_000_000 - 30_000
}

// gc writes one GC as the runtime reports it: triggered on an application
// thread, suspension, start, end, heap stats, restart.
func (g *large) gc() {
	g.gcCount++
	t := g.threads[g.rng.IntN(len(g.threads))]
	depth := uint32(0)
	if r := g.rng.IntN(20); r >= 18 {
		depth = 2
	} else if r >= 14 {
		depth = 1
	}
	g.buf = AppendGCTriggered(g.buf, clrevents.GCTriggered{Reason: clrevents.ReasonAllocSmall})
	g.emit(clrevents.IDGCTriggered, t, t, g.stack())
	g.buf = AppendSuspendEEBegin(g.buf, clrevents.GCSuspendEEBegin{Reason: clrevents.SuspendForGC, Count: g.gcCount})
	g.emit(clrevents.IDGCSuspendEEBegin, t, t, nil)
	g.buf = AppendClrInstance(g.buf)
	g.emit(clrevents.IDGCSuspendEEEnd, t, t, nil)
	g.buf = AppendGCStart(g.buf, clrevents.GCStart{Count: g.gcCount, Depth: depth, Reason: clrevents.ReasonAllocSmall, Type: clrevents.GCNonConcurrent})
	g.emit(clrevents.IDGCStart, t, t, nil)
	g.now += int64(200_000 + g.rng.IntN(3_000_000))
	g.buf = AppendGCEnd(g.buf, clrevents.GCEnd{Count: g.gcCount, Depth: depth})
	g.emit(clrevents.IDGCEnd, t, t, nil)
	var hs clrevents.GCHeapStats
	for i := 0; i < 4; i++ {
		hs.GenerationSize[i] = uint64(g.rng.IntN(100 << 20))
		hs.TotalPromotedSize[i] = uint64(g.rng.IntN(100 << 20))
	}
	hs.PinnedObjectCount = uint32(g.rng.IntN(50))
	hs.GCHandleCount = uint32(100 + g.rng.IntN(900))
	hs.FinalizationPromotedSize = uint64(g.rng.IntN(100 << 20))
	hs.FinalizationPromotedCount = uint64(g.rng.IntN(100 << 20))
	hs.GenerationSize[4] = uint64(g.rng.IntN(1 << 20)) // the pinned object heap
	g.buf = AppendGCHeapStats(g.buf, hs)
	g.emit(clrevents.IDGCHeapStats, t, t, nil)
	g.buf = AppendClrInstance(g.buf)
	g.emit(clrevents.IDGCRestartEEBegin, t, t, nil)
	g.buf = AppendClrInstance(g.buf)
	g.emit(clrevents.IDGCRestartEEEnd, t, t, nil)
	g.st.GCs++
}
