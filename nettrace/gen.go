package nettrace

import (
	"encoding/binary"
	"io"
	"math"
	"math/rand/v2"
	"time"
)

// GenStats says what GenerateLarge wrote, for tests to check readers
// against.
type GenStats struct {
	Events          int64
	EventsWithStack int64 // events with a non-empty stack
	Samples         int64 // SampleProfiler ThreadSample events
	GCs             int64 // GCStart events
	AllocTicks      int64 // GC/AllocationTick events
	Contentions     int64 // Contention/Start events (each has its Stop)
	ContentionNanos int64 // sum of the Stops' DurationNs
	Bytes           int64 // stream bytes
}

// GenerateLarge streams a synthetic but realistic NetTrace V4 trace of about
// approxBytes bytes to w, with the runtime's payload layouts: method loads
// (MethodLoadVerbose) for a set of fake JIT'd methods, then 1 ms
// sample-profiler ticks (each a SuspendEE/RestartEE pair for reason
// SuspendOther on the sampler thread, then ThreadSample events for a
// random subset of 64 threads, with stacks made of those methods),
// allocation ticks of a dozen types, lock contention (ContentionStart, then
// ContentionStop with the wait's duration) on 16 locks, and GCs every 20–80
// ms with the runtime's triggered/suspend/start/end/heap-stats/restart
// sequence. Memory use does not depend on the size: events go out block by
// block. The same seed gives the same bytes.
func GenerateLarge(w io.Writer, approxBytes int64, seed uint64) (GenStats, error) {
	g := newGen(seed)
	h := Header{
		SyncTimeUTC:             time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.UTC),
		SyncTimeQPC:             1_000_000_000,
		QPCFrequency:            1_000_000_000,
		PointerSize:             8,
		ProcessID:               4242,
		NumberOfProcessors:      8,
		ExpectedCPUSamplingRate: 1_000_000,
	}
	wr, err := NewWriter(w, h, WriterOptions{})
	if err != nil {
		return GenStats{}, err
	}
	g.w = wr
	g.now = h.SyncTimeQPC + 1000
	g.methodLoads()
	for wr.off < approxBytes && wr.err == nil {
		g.tick()
	}
	if err := wr.Close(); err != nil {
		return g.st, err
	}
	g.st.Bytes = wr.off
	return g.st, nil
}

type gen struct {
	w       *Writer
	rng     *rand.Rand
	st      GenStats
	now     int64
	ev      Event
	buf     []byte
	methods []uint64 // method start addresses
	stacks  [][]uint64
	threads []uint64
	gcCount uint32
	nextGC  int64
	m       map[string]*Metadata
	types   []uint64 // type ids of genTypes
	locks   []uint64 // lock ids
}

// genTypes are the allocated types, the first most often.
var genTypes = [...]string{"System.Byte[]", "System.String", "System.Object[]", "System.Char[]",
	"System.Collections.Generic.List`1[System.Int32]", "System.Int32[]", "Synthetic.Namespace.Order",
	"Synthetic.Namespace.Customer", "System.Text.StringBuilder", "System.Collections.Generic.Dictionary`2[System.String,System.Object]",
	"System.Threading.Tasks.Task", "System.Action"}

const (
	genSampler = 900 // sampler thread id
)

func newGen(seed uint64) *gen {
	g := &gen{rng: rand.New(rand.NewPCG(seed, seed^0x9E3779B97F4A7C15)), m: map[string]*Metadata{}}
	meta := func(key, prov string, id, ver uint32, kw uint64, lvl, op uint8) {
		g.m[key] = &Metadata{Provider: prov, EventID: id, Version: ver, Keywords: kw, Level: lvl, Opcode: op, HasFields: true}
	}
	meta("sample", ProviderSampleProfiler, 0, 0, 0, 4, 0)
	meta("gcstart", ProviderRuntime, 1, 2, 1, 4, 1)
	meta("gcend", ProviderRuntime, 2, 1, 1, 4, 2)
	meta("restartend", ProviderRuntime, 3, 1, 1, 4, 132)
	meta("heapstats", ProviderRuntime, 4, 2, 1, 4, 133)
	meta("restartbegin", ProviderRuntime, 7, 1, 1, 4, 136)
	meta("suspendend", ProviderRuntime, 8, 1, 1, 4, 137)
	meta("suspendbegin", ProviderRuntime, 9, 1, 1, 4, 10)
	meta("alloc", ProviderRuntime, 10, 4, 1, 5, 11)
	meta("triggered", ProviderRuntime, 35, 0, 1, 4, 35)
	meta("contstart", ProviderRuntime, 81, 2, 0x4000, 4, 1)
	meta("contstop", ProviderRuntime, 91, 1, 0x4000, 4, 2)
	meta("methodload", ProviderRuntime, 143, 2, 0x18, 4, 37)
	for i := range genTypes {
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

func (g *gen) u16(v uint16) { g.buf = binary.LittleEndian.AppendUint16(g.buf, v) }
func (g *gen) u32(v uint32) { g.buf = binary.LittleEndian.AppendUint32(g.buf, v) }
func (g *gen) u64(v uint64) { g.buf = binary.LittleEndian.AppendUint64(g.buf, v) }

// emit writes the event built in g.buf, 1–2,000 ns after the last one.
func (g *gen) emit(meta string, thread, capture uint64, stack []uint64) {
	g.emitAfter(meta, thread, capture, stack, 1+int64(g.rng.IntN(2000)))
}

// emitAfter writes the event built in g.buf, d ns after the last one.
func (g *gen) emitAfter(meta string, thread, capture uint64, stack []uint64, d int64) {
	g.now += d
	ev := &g.ev
	ev.Meta = g.m[meta]
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
		return // the writer keeps the error; GenerateLarge returns it
	}
	g.st.Events++
	if len(stack) > 0 {
		g.st.EventsWithStack++
	}
}

func (g *gen) methodLoads() {
	for i, start := range g.methods {
		g.u64(0x7f0000900000 + uint64(i)*0x40) // MethodID
		g.u64(0x7f0000a00000)                  // ModuleID
		g.u64(start)
		g.u32(0x3f0)                  // size
		g.u32(0x06000000 + uint32(i)) // token
		g.u32(0)
		g.buf = appendUTF16Z(g.buf, "Synthetic.Namespace.Type"+string(rune('A'+i%26)))
		g.buf = appendUTF16Z(g.buf, "Method"+itoa(i))
		g.buf = appendUTF16Z(g.buf, "void  (int32)")
		g.u16(0)
		g.u64(0)
		g.emit("methodload", g.threads[0], g.threads[0], nil)
	}
}

func itoa(i int) string {
	var b [20]byte
	p := len(b)
	for {
		p--
		b[p] = byte('0' + i%10)
		i /= 10
		if i == 0 {
			return string(b[p:])
		}
	}
}

func (g *gen) stack() []uint64 { return g.stacks[g.rng.IntN(len(g.stacks))] }

// tick writes one millisecond of activity.
func (g *gen) tick() {
	// The sampler suspends the runtime (reason SuspendOther), then writes
	// a sample for each thread it walked.
	g.u32(0)          // SuspendOther
	g.u32(0xFFFFFFFF) // no GC count, as the runtime writes it
	g.u16(0)
	g.emit("suspendbegin", genSampler, genSampler, nil)
	g.u16(0)
	g.emit("suspendend", genSampler, genSampler, nil)
	n := 8 + g.rng.IntN(24)
	for i := 0; i < n; i++ {
		t := g.threads[g.rng.IntN(len(g.threads))]
		g.u32(uint32(1 + g.rng.IntN(2)))
		g.emit("sample", t, genSampler, g.stack())
		g.st.Samples++
	}
	g.u16(0)
	g.emit("restartbegin", genSampler, genSampler, nil)
	g.u16(0)
	g.emit("restartend", genSampler, genSampler, nil)
	// Allocation ticks.
	for i := g.rng.IntN(4); i > 0; i-- {
		t := g.threads[g.rng.IntN(len(g.threads))]
		ty := g.rng.IntN(len(genTypes))
		if g.rng.IntN(2) == 0 {
			ty = 0
		}
		amount := 100_000 + uint32(g.rng.IntN(5000))
		g.u32(amount)
		g.u32(uint32(g.rng.IntN(10) / 9)) // small, now and then large
		g.u16(0)
		g.u64(uint64(amount))
		g.u64(g.types[ty])
		g.buf = appendUTF16Z(g.buf, genTypes[ty])
		g.u32(0)
		g.u64(0x7e0000000000 + uint64(g.rng.Uint32())&^7)
		g.u64(24 + uint64(g.rng.IntN(100000)))
		g.emit("alloc", t, t, g.stack())
		g.st.AllocTicks++
	}
	// Lock contention now and then: a start, then the stop on the same
	// thread once the wait is over, with its duration.
	if g.rng.IntN(10) == 0 {
		t := g.threads[1+g.rng.IntN(len(g.threads)-1)]
		lk := g.rng.IntN(len(g.locks))
		owner := g.threads[(lk*5)%len(g.threads)]
		g.buf = append(g.buf, 0) // managed
		g.u16(0)
		g.u64(g.locks[lk])
		g.u64(g.locks[lk] + 0x40) // the object locked on
		g.u64(owner)
		g.emit("contstart", t, t, g.stack())
		wait := int64(1_000 + g.rng.IntN(400_000))
		start := g.now
		g.now += wait
		g.buf = append(g.buf, 0)
		g.u16(0)
		d := float64(g.now + 1 - start) // emit adds at least 1 tick
		g.u64(math.Float64bits(d))
		g.emitAfter("contstop", t, t, nil, 1)
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
func (g *gen) gc() {
	g.gcCount++
	t := g.threads[g.rng.IntN(len(g.threads))]
	depth := uint32(0)
	if r := g.rng.IntN(20); r >= 18 {
		depth = 2
	} else if r >= 14 {
		depth = 1
	}
	g.u32(0) // AllocSmall
	g.u16(0)
	g.emit("triggered", t, t, g.stack())
	g.u32(1) // SuspendForGC
	g.u32(g.gcCount)
	g.u16(0)
	g.emit("suspendbegin", t, t, nil)
	g.u16(0)
	g.emit("suspendend", t, t, nil)
	g.u32(g.gcCount)
	g.u32(depth)
	g.u32(0)
	g.u32(0)
	g.u16(0)
	g.u64(0)
	g.emit("gcstart", t, t, nil)
	g.now += int64(200_000 + g.rng.IntN(3_000_000))
	g.u32(g.gcCount)
	g.u32(depth)
	g.u16(0)
	g.emit("gcend", t, t, nil)
	for i := 0; i < 10; i++ {
		g.u64(uint64(g.rng.IntN(100 << 20)))
	}
	g.u32(uint32(g.rng.IntN(50)))
	g.u32(0)
	g.u32(uint32(100 + g.rng.IntN(900)))
	g.u16(0)
	g.u64(uint64(g.rng.IntN(1 << 20)))
	g.u64(0)
	g.emit("heapstats", t, t, nil)
	g.u16(0)
	g.emit("restartbegin", t, t, nil)
	g.u16(0)
	g.emit("restartend", t, t, nil)
	g.st.GCs++
}
