package nettrace

import (
	"encoding/binary"
	"io"
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
	Bytes           int64 // stream bytes
}

// GenerateLarge streams a synthetic but realistic NetTrace V4 trace of about
// approxBytes bytes to w: method loads for a set of fake JIT'd methods, then
// 1 ms sample-profiler ticks over many threads with stacks made of those
// methods, allocation ticks and contention on application threads, and
// regular GCs with the runtime's suspend/start/heap-stats/end/restart
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
}

const (
	genSampler = 900 // sampler thread id
	genGCTid   = 901
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

// emit writes the event built in g.buf.
func (g *gen) emit(meta string, thread, capture uint64, stack []uint64) {
	g.now += 1 + int64(g.rng.IntN(2000))
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
	// Samples of a random subset of threads from the sampler thread.
	n := 8 + g.rng.IntN(24)
	for i := 0; i < n; i++ {
		t := g.threads[g.rng.IntN(len(g.threads))]
		g.u32(uint32(1 + g.rng.IntN(2)))
		g.emit("sample", t, genSampler, g.stack())
		g.st.Samples++
	}
	// Allocation ticks.
	for i := g.rng.IntN(4); i > 0; i-- {
		t := g.threads[g.rng.IntN(len(g.threads))]
		g.u32(100_000 + uint32(g.rng.IntN(5000)))
		g.u32(uint32(g.rng.IntN(10) / 9))
		g.u16(0)
		g.u64(100_000 + uint64(g.rng.IntN(5000)))
		g.u64(0x7f0000b00000 + uint64(g.rng.IntN(50))*0x100)
		g.buf = appendUTF16Z(g.buf, "System.Byte[]")
		g.u32(0)
		g.u64(0x7e0000000000 + uint64(g.rng.Uint32()))
		g.u64(24 + uint64(g.rng.IntN(100000)))
		g.emit("alloc", t, t, g.stack())
	}
	// Occasional lock contention: start and stop on the same thread.
	if g.rng.IntN(10) == 0 {
		t := g.threads[g.rng.IntN(len(g.threads))]
		g.buf = append(g.buf, 0)
		g.u16(0)
		g.u64(0x7e0000100000)
		g.u64(0x7e0000100040)
		g.u64(uint64(g.threads[0]))
		g.emit("contstart", t, t, g.stack())
		g.buf = append(g.buf, 0)
		g.u16(0)
		g.u64(uint64(g.rng.IntN(2_000_000)))
		g.emit("contstop", t, t, nil)
	}
	if g.now >= g.nextGC {
		g.gc()
		g.nextGC = g.now + 20_000_000 + int64(g.rng.IntN(60_000_000))
	}
	g.now += 1_000_000 - 30_000
}

// gc writes one GC as the runtime reports it: triggered on an application
// thread, suspension, start, heap stats, end, restart.
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
	for i := 0; i < 10; i++ {
		g.u64(uint64(g.rng.IntN(100 << 20)))
	}
	g.u32(uint32(g.rng.IntN(50)))
	g.u32(0)
	g.u32(uint32(100 + g.rng.IntN(900)))
	g.u16(0)
	g.u64(uint64(g.rng.IntN(1 << 20)))
	g.u64(0)
	g.emit("heapstats", genGCTid, genGCTid, nil)
	g.u32(g.gcCount)
	g.u32(depth)
	g.u16(0)
	g.emit("gcend", t, t, nil)
	g.u16(0)
	g.emit("restartbegin", t, t, nil)
	g.u16(0)
	g.emit("restartend", t, t, nil)
	g.st.GCs++
}
