package perf

import (
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/stacks"
	"github.com/clrspy/clrspy/symtab"
	"github.com/clrspy/clrspy/unwind"
)

// BuilderOptions configure a Builder.
type BuilderOptions struct {
	// Hz is the sampling frequency (the profile's nominal period); default 99.
	Hz int
	// Cycles is set when samples count cycles rather than CPU time: each
	// sample then stands for 1/Hz seconds.
	Cycles bool
	// MaxDepth bounds the user frames of a stack (default 256).
	MaxDepth int
	// FramePointers takes the user stack from the kernel's frame-pointer
	// walk alone, without DWARF unwinding (for comparison).
	FramePointers bool
	// OffCPU makes the profile a wall-clock one: switch-outs weighed by
	// the time off the CPU beside the CPU samples (see offcpu_build.go).
	OffCPU bool
}

// Builder turns samples into a profile: it unwinds each sample's user
// stack (Sample, on the sampler's goroutine, without allocating unless the
// stack or thread is new), takes GC stops from the EventPipe session's
// events (Event, on the reader's goroutine) to label samples taken during
// them, and names frames when the profile is made (Result). Sample, Event
// and Result may run concurrently; Result reads the Symbols table, so it
// must not run while another goroutine feeds that table events.
type Builder struct {
	mu   sync.Mutex
	pid  int
	hdr  *nettrace.Header
	syms *stacks.Symbols
	proc *symtab.Process
	opts BuilderOptions

	scratch []uint64 // unwound user frames
	keybuf  []uint64 // kernel frames, a marker, user frames: the dedup key

	raws    []rawStack
	rawIdx  map[string]int32
	threads []stacks.Thread
	tidx    map[int]int32

	pending []pendingSample
	accs    map[accKey]*acc
	labels  []gcLabel // index 0: no label
	lblIdx  map[gcLabel]int32

	// GC stops from the session (sorted by start), the GC suspensions
	// begun and not ended yet (gcpause's OpenSince), and the latest event time:
	// samples are labelled once no earlier stop can still arrive.
	gc        *gcpause.Analyzer
	stops     []gcpause.Stop
	watermark int64
	session   bool

	off offCPU

	first, last          int64
	monoStart            int64
	wallStart            time.Time
	samples              int64
	ends                 [4]int64
	spliced, noUserStack int64
}

type rawStack struct {
	kernel, user []uint64
	first        int64 // session ns of the first sample: the time managed names are resolved at
}

type pendingSample struct {
	ts        int64 // session ns
	weight    int64 // ns
	thread    int32
	raw       int32
	off       bool // time off the CPU from ts
	preempted bool // off the CPU while runnable
	spread    bool // unsampled switch-outs' time (spreadUnsampled): no switch-out of its own
}

type accKey struct {
	thread, raw, label int32
	off, preempted     bool
}

type acc struct{ count, nanos int64 }

type gcLabel struct {
	number uint32
	phase  string
}

// AnonFrame names anonymous executable memory that no method event and
// no perf map covers.
const AnonFrame = "[jit or stub code]"

// labelSlack is how far behind the latest session event a GC stop can
// still show up (events of different threads are flushed at different
// times): samples younger than that wait for their label.
const labelSlack = 2 * int64(time.Second)

// NewBuilder returns a Builder for pid. hdr and syms come from the
// EventPipe session opened alongside (both may be nil: no managed names
// but the perf map's, no GC labels).
func NewBuilder(pid int, hdr *nettrace.Header, syms *stacks.Symbols, opts BuilderOptions) (*Builder, error) {
	if opts.Hz <= 0 {
		opts.Hz = 99
	}
	if opts.MaxDepth <= 0 {
		opts.MaxDepth = 256
	}
	proc, err := symtab.NewProcess(pid)
	if err != nil {
		return nil, fmt.Errorf("pid %d: %w", pid, err)
	}
	return newBuilder(pid, proc, hdr, syms, opts), nil
}

// newBuilder makes a Builder over an existing address-space model
// (benchmarks reuse one, its files loaded).
func newBuilder(pid int, proc *symtab.Process, hdr *nettrace.Header, syms *stacks.Symbols, opts BuilderOptions) *Builder {
	if opts.Hz <= 0 {
		opts.Hz = 99
	}
	if opts.MaxDepth <= 0 {
		opts.MaxDepth = 256
	}
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	b := &Builder{
		pid: pid, hdr: hdr, syms: syms, proc: proc, opts: opts,
		scratch: make([]uint64, 0, opts.MaxDepth),
		keybuf:  make([]uint64, 0, opts.MaxDepth+maxStack+1),
		rawIdx:  make(map[string]int32),
		tidx:    make(map[int]int32),
		accs:    make(map[accKey]*acc),
		labels:  []gcLabel{{}},
		lblIdx:  make(map[gcLabel]int32),
		first:   math.MaxInt64, last: math.MinInt64,
		monoStart: ts.Nano(), wallStart: time.Now(),
		watermark: math.MinInt64,
	}
	if hdr != nil {
		b.gc = gcpause.New(hdr, gcpause.Options{MaxGCs: 1, MaxSuspensions: 1, OnStop: b.addStop})
	}
	return b
}

// SessionNanos converts a sample's CLOCK_MONOTONIC time to nanoseconds
// since the EventPipe session's start. On Linux the runtime's event clock
// is CLOCK_MONOTONIC in nanoseconds (QPCFrequency 1e9), so this is a
// subtraction; another frequency is scaled.
func SessionNanos(hdr *nettrace.Header, mono int64) int64 {
	f := hdr.QPCFrequency
	if f == 1_000_000_000 || f <= 0 {
		return hdr.Nanos(mono)
	}
	qpc := mono/1_000_000_000*f + mono%1_000_000_000*f/1_000_000_000
	return hdr.Nanos(qpc)
}

func (b *Builder) nanos(mono int64) int64 {
	if b.hdr == nil {
		return mono - b.monoStart
	}
	return SessionNanos(b.hdr, mono)
}

// Sample unwinds and records one sample.
func (b *Builder) Sample(s *Sample) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if s.Kind == KindSwitchIn || s.Kind == KindExit || s.Kind == KindPreempted || s.Kind == KindUnsampled {
		b.switchEvent(s.Kind, s.Tid, b.nanos(s.Time), -1, false)
		return
	}
	if s.Kind == KindSwitchOut && b.knownSwitch(s) {
		s.WalkCached = true
		return
	}
	raw, ts := b.stackOf(s)
	if s.Kind == KindSwitchOut {
		// A switch-out without callchains (the sampler's lean event) is
		// walked from its copy alone: no kernel frames, nothing past the
		// copy. Its walk is not kept; the sampler takes the callchains
		// of the thread's next ones.
		if len(s.Kernel) > 0 || len(s.User) > 0 {
			b.rememberSwitch(s, raw)
		} else {
			b.off.lean++
		}
		b.switchEvent(s.Kind, s.Tid, ts, raw, isLean(s))
		return
	}
	w := int64(s.Period)
	if b.opts.Cycles || w <= 0 {
		w = int64(time.Second) / int64(b.opts.Hz)
	}
	b.first = min(b.first, ts)
	b.last = max(b.last, ts)
	b.samples++
	b.pending = append(b.pending, pendingSample{ts: ts, weight: w, thread: b.thread(s.Tid), raw: raw})
	if len(b.pending) >= 256 {
		b.flush(false)
	}
}

// stackOf unwinds s's user stack (DWARF CFI and frame pointers over the
// copied stack, continued by the kernel's frame-pointer walk; or that walk
// alone with FramePointers) and interns it with its kernel frames: the
// raw stack's index, and s's time in session nanoseconds. b.mu is held.
func (b *Builder) stackOf(s *Sample) (int32, int64) {
	user := b.scratch[:0]
	if s.HasRegs && !b.opts.FramePointers {
		st := unwind.Stack{Base: s.Regs.SP, Data: s.Stack}
		var end unwind.End
		user, end = unwind.Unwind(&s.Regs, &st, b.proc, user)
		if end == unwind.EndStack || end == unwind.EndBroken {
			var ok bool
			if user, ok = unwind.Splice(user, s.User); ok {
				b.spliced++
			}
		}
		b.ends[end]++
	} else {
		if !s.HasRegs {
			b.noUserStack++
		}
		for _, ip := range s.User {
			if len(user) == cap(user) {
				break
			}
			user = append(user, ip)
		}
	}
	ts := b.nanos(s.Time)
	key := append(append(append(b.keybuf[:0], s.Kernel...), ^uint64(0)), user...)
	raw := b.raw(key, len(s.Kernel), ts)
	b.keybuf = key[:0]
	return raw, ts
}

// raw interns a stack key (kernel frames, a ^0 marker, user frames).
func (b *Builder) raw(key []uint64, nKernel int, ts int64) int32 {
	k := unsafe.String((*byte)(unsafe.Pointer(&key[0])), len(key)*8)
	if i, ok := b.rawIdx[k]; ok {
		return i
	}
	cp := append([]uint64(nil), key...)
	i := int32(len(b.raws))
	b.raws = append(b.raws, rawStack{kernel: cp[:nKernel], user: cp[nKernel+1:], first: ts})
	b.rawIdx[unsafe.String((*byte)(unsafe.Pointer(&cp[0])), len(cp)*8)] = i
	return i
}

func (b *Builder) thread(tid int) int32 {
	if i, ok := b.tidx[tid]; ok {
		return i
	}
	i := int32(len(b.threads))
	t := stacks.Thread{ID: uint64(tid)}
	if c, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/comm", b.pid, tid)); err == nil {
		t.Name = strings.TrimSpace(string(c))
	}
	b.threads = append(b.threads, t)
	b.tidx[tid] = i
	return i
}

// Event takes one event of the EventPipe session: GC suspensions and
// stops label the samples taken during them. Other events only advance
// the session's clock.
func (b *Builder) Event(ev *nettrace.Event) {
	if b.gc == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.session = true
	ts := b.hdr.Nanos(ev.Timestamp)
	b.watermark = max(b.watermark, ts)
	b.gc.Event(ev)
	b.flush(false)
}

// Stats implements analysis.Analyzer: the session's GC events the builder
// used (samples come from the sampler, not the stream).
func (b *Builder) Stats() analysis.Stats {
	if b.gc == nil {
		return analysis.Stats{}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.gc.Stats()
}

// addStop is gcpause's OnStop: it keeps stops sorted by start.
func (b *Builder) addStop(s *gcpause.Stop) {
	st := *s
	st.GC = &gcpause.GC{Number: s.GC.Number, Generation: s.GC.Generation, Type: s.GC.Type}
	i := sort.Search(len(b.stops), func(i int) bool { return b.stops[i].StartNanos > st.StartNanos })
	b.stops = append(b.stops, gcpause.Stop{})
	copy(b.stops[i+1:], b.stops[i:])
	b.stops[i] = st
}

// horizon is the time before which every GC stop is known.
func (b *Builder) horizon(final bool) int64 {
	if final || !b.session {
		if b.gc == nil || final {
			return math.MaxInt64
		}
		return math.MinInt64 // the session has not delivered anything yet
	}
	h := b.watermark - labelSlack
	if begin := b.gc.OpenSince(true); begin >= 0 {
		h = min(h, begin) // a GC suspension not ended yet (gcpause pairs them)
	}
	return h
}

// flush labels and aggregates the pending samples older than the horizon.
func (b *Builder) flush(final bool) {
	h := b.horizon(final)
	keep := b.pending[:0]
	for _, p := range b.pending {
		if p.ts >= h {
			keep = append(keep, p)
			continue
		}
		b.add(b.accs, p)
	}
	b.pending = keep
	// Stops that ended long before the horizon can no longer label a
	// sample.
	if !final && h != math.MinInt64 {
		n := 0
		for n < len(b.stops) && b.stops[n].EndNanos < h-labelSlack {
			n++
		}
		if n > 0 && n == len(b.stops) || n > 64 {
			b.stops = append(b.stops[:0], b.stops[n:]...)
		}
	}
}

func (b *Builder) add(accs map[accKey]*acc, p pendingSample) {
	k := accKey{thread: p.thread, raw: p.raw, label: b.labelAt(p.ts), off: p.off, preempted: p.preempted}
	a := accs[k]
	if a == nil {
		a = &acc{}
		accs[k] = a
	}
	if !p.spread {
		a.count++
	}
	a.nanos += p.weight
}

// labelAt is the GC label of a sample at ts (0: none).
func (b *Builder) labelAt(ts int64) int32 {
	st := b.stops
	i := sort.Search(len(st), func(i int) bool { return st[i].StartNanos > ts }) - 1
	// Stops do not nest; look back a few in case of odd overlaps.
	for k := i; k >= 0 && k > i-4; k-- {
		s := &st[k]
		if ts >= s.StartNanos && ts < s.EndNanos {
			l := gcLabel{number: s.GC.Number, phase: "pause"}
			if s.SuspendEndNanos >= 0 && ts < s.SuspendEndNanos {
				l.phase = "suspend"
			}
			idx, ok := b.lblIdx[l]
			if !ok {
				idx = int32(len(b.labels))
				b.labels = append(b.labels, l)
				b.lblIdx[l] = idx
			}
			return idx
		}
	}
	return 0
}

// Close releases what the Builder holds open (the target's perf map).
// Result can no longer read the perf map afterwards.
func (b *Builder) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.proc.Close()
}

// UnwindStats counts how the walks of the user stacks ended.
type UnwindStats struct {
	Samples     int64
	Outermost   int64 // reached the thread's first frame
	StackEnd    int64 // the copied stack ran out
	Broken      int64 // no rule or a frame that pointed nowhere
	DepthLimit  int64
	Spliced     int64 // continued with the kernel's frame-pointer walk
	NoUserStack int64 // samples without user registers
}

// UnwindStats returns the walk counters so far.
func (b *Builder) UnwindStats() UnwindStats {
	b.mu.Lock()
	defer b.mu.Unlock()
	return UnwindStats{
		Samples: b.samples, Outermost: b.ends[unwind.EndOutermost], StackEnd: b.ends[unwind.EndStack],
		Broken: b.ends[unwind.EndBroken], DepthLimit: b.ends[unwind.EndDepth], Spliced: b.spliced, NoUserStack: b.noUserStack,
	}
}

// Finish labels every sample still waiting with what is known: call it
// after the session's last event.
func (b *Builder) Finish() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.finishSwitches()
	b.flush(true)
}

var (
	kallsymsOnce sync.Once
	kallsyms     *symtab.Kernel
)

func kernelSymbols() *symtab.Kernel {
	kallsymsOnce.Do(func() {
		if data, err := os.ReadFile("/proc/kallsyms"); err == nil {
			kallsyms = symtab.ParseKallsyms(data)
		}
	})
	return kallsyms
}

// Result names every frame and returns the profile so far. Samples whose
// GC label may still change are included with what is known now.
func (b *Builder) Result() *stacks.Profile {
	b.mu.Lock()
	defer b.mu.Unlock()
	accs := b.accs
	if len(b.pending) > 0 {
		accs = make(map[accKey]*acc, len(b.accs)+len(b.pending))
		for k, v := range b.accs {
			c := *v
			accs[k] = &c
		}
		for _, p := range b.pending {
			b.add(accs, p)
		}
	}
	p := &stacks.Profile{
		Threads:     append([]stacks.Thread(nil), b.threads...),
		PeriodNanos: int64(time.Second) / int64(b.opts.Hz),
		CPUTime:     true,
		Methods:     b.syms.Len(),
		OffCPU:      b.opts.OffCPU,
	}
	b.offNotes(p)
	if b.last >= b.first {
		p.DurationNanos = b.last - b.first
		if b.hdr != nil {
			p.Start = b.hdr.SyncTimeUTC.Add(time.Duration(b.first))
		} else {
			p.Start = b.wallStart.Add(time.Duration(b.first))
		}
	}
	n := &namer{b: b, p: p, frameIdx: make(map[stacks.Frame]int32), native: make(map[uint64]int32)}
	resolved := make([][]int32, len(b.raws))
	used := make([]bool, len(b.raws))
	for k := range accs {
		used[k.raw] = true
	}
	for i := range b.raws {
		if used[i] {
			resolved[i] = n.stack(&b.raws[i])
		}
	}
	keys := make([]accKey, 0, len(accs))
	for k := range accs {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, c := keys[i], keys[j]
		if a.thread != c.thread {
			return a.thread < c.thread
		}
		if a.raw != c.raw {
			return a.raw < c.raw
		}
		return a.label < c.label
	})
	type mkey struct {
		thread, label  int32
		off, preempted bool
		stack          string
	}
	merged := make(map[mkey]int)
	for _, k := range keys {
		a := accs[k]
		st := resolved[k.raw]
		th := &p.Threads[k.thread]
		if k.off {
			// Off-CPU time: its own entries, outside the CPU samples'
			// counts.
			mk := mkey{k.thread, k.label, true, k.preempted, stackKey(st)}
			if i, ok := merged[mk]; ok {
				p.Samples[i].Count += a.count
				p.Samples[i].Nanos += a.nanos
				continue
			}
			merged[mk] = len(p.Samples)
			why := "blocked"
			if k.preempted {
				why = "runnable" // preempted or yielded: waiting for a CPU
			}
			p.Samples = append(p.Samples, stacks.Sample{Thread: int(k.thread), Stack: st, Count: a.count, Nanos: a.nanos, OffCPU: true,
				Labels: append(b.sampleLabels(k.label), stacks.Label{Key: "off_cpu", Str: why})})
			continue
		}
		th.Samples += a.count
		p.Total += a.count
		if len(st) > 0 && p.Frames[st[0]].Kind == stacks.KindManaged {
			p.Managed += a.count
		} else {
			th.External += a.count
			p.External += a.count
		}
		for _, f := range st {
			if p.Frames[f].Kind == stacks.KindUnknown {
				p.Unresolved += a.count
			}
		}
		mk := mkey{k.thread, k.label, false, false, stackKey(st)}
		if i, ok := merged[mk]; ok {
			p.Samples[i].Count += a.count
			p.Samples[i].Nanos += a.nanos
			continue
		}
		merged[mk] = len(p.Samples)
		s := stacks.Sample{Thread: int(k.thread), Stack: st, Count: a.count, Nanos: a.nanos}
		s.Labels = b.sampleLabels(k.label)
		p.Samples = append(p.Samples, s)
	}
	sort.SliceStable(p.Samples, func(i, j int) bool {
		a, c := &p.Samples[i], &p.Samples[j]
		if a.Thread != c.Thread {
			return a.Thread < c.Thread
		}
		if a.Nanos != c.Nanos {
			return a.Nanos > c.Nanos
		}
		return a.Count > c.Count
	})
	return p
}

// sampleLabels are the pprof labels of GC label l (nil for none).
func (b *Builder) sampleLabels(l int32) []stacks.Label {
	if l <= 0 {
		return nil
	}
	g := b.labels[l]
	return []stacks.Label{{Key: "gc", Num: int64(g.number)}, {Key: "gc_phase", Str: g.phase}}
}

func stackKey(st []int32) string {
	if len(st) == 0 {
		return ""
	}
	return string(unsafe.Slice((*byte)(unsafe.Pointer(&st[0])), len(st)*4))
}

// namer names the frames of one Result.
type namer struct {
	b        *Builder
	p        *stacks.Profile
	frameIdx map[stacks.Frame]int32
	native   map[uint64]int32 // frames of non-managed addresses, by address
	perfMap  *symtab.PerfMap
	perfRead bool
}

// Frames names raw stack id (a stackOf index), leaf first: the frames
// the profile's namer gives it. Like Result it reads the Symbols table.
func (b *Builder) Frames(ids []int32) [][]stacks.Frame {
	b.mu.Lock()
	defer b.mu.Unlock()
	p := &stacks.Profile{}
	n := &namer{b: b, p: p, frameIdx: make(map[stacks.Frame]int32), native: make(map[uint64]int32)}
	out := make([][]stacks.Frame, len(ids))
	for i, id := range ids {
		if id < 0 || int(id) >= len(b.raws) {
			continue
		}
		for _, f := range n.stack(&b.raws[id]) {
			out[i] = append(out[i], p.Frames[f])
		}
	}
	return out
}

func (n *namer) frame(f stacks.Frame) int32 {
	if i, ok := n.frameIdx[f]; ok {
		return i
	}
	i := int32(len(n.p.Frames))
	n.p.Frames = append(n.p.Frames, f)
	n.frameIdx[f] = i
	return i
}

// stack names a raw stack, leaf first: kernel frames, then user frames.
func (n *namer) stack(r *rawStack) []int32 {
	out := make([]int32, 0, len(r.kernel)+len(r.user))
	if len(r.kernel) > 0 {
		ks := kernelSymbols()
		for i, ip := range r.kernel {
			if i > 0 {
				ip--
			}
			name, ok := ks.Lookup(ip)
			if !ok {
				name = "[kernel]"
			}
			out = append(out, n.frame(stacks.Frame{Name: name, Module: "[kernel]", Kind: stacks.KindKernel}))
		}
	}
	for i, ip := range r.user {
		if i > 0 && ip > 0 {
			// A return address: the call is the byte before.
			ip--
		}
		out = append(out, n.user(ip, r.first))
	}
	return out
}

func (n *namer) user(addr uint64, ts int64) int32 {
	if m, ok := n.b.syms.Lookup(addr, ts); ok {
		return n.frame(stacks.Frame{Name: m.Name, Module: m.Module, Kind: stacks.KindManaged, Address: m.Start, Tier: m.Tier})
	}
	if i, ok := n.native[addr]; ok {
		return i
	}
	var f stacks.Frame
	sym := n.b.proc.Symbolize(addr)
	switch sym.Kind {
	case symtab.KindNative:
		f = stacks.Frame{Name: sym.Name, Module: sym.Module, Kind: stacks.KindNative}
		if f.Name == "" {
			f.Name = fmt.Sprintf("%s+%#x", sym.Module, sym.Offset)
		}
	case symtab.KindImage:
		if sym.Name != "" {
			// ReadyToRun code no method event named, named from the
			// module file's own method map.
			f = stacks.Frame{Name: sym.Name, Module: sym.Module, Kind: stacks.KindManaged}
		} else {
			f = stacks.Frame{Name: fmt.Sprintf("%s+%#x", sym.Module, sym.Offset), Module: sym.Module, Kind: stacks.KindUnknown}
		}
	case symtab.KindVDSO:
		f = stacks.Frame{Name: sym.Name, Module: sym.Module, Kind: stacks.KindNative}
	case symtab.KindAnon:
		if !n.perfRead {
			n.perfRead = true
			n.perfMap = n.b.proc.ReadPerfMap()
		}
		if name, ok := n.perfMap.Lookup(addr); ok {
			f = stacks.Frame{Name: name, Module: "[perf-map]", Kind: stacks.KindManaged}
		} else {
			// The runtime's executable memory that no method event
			// covers: its stubs (precode, call counting, fixups), or code
			// of a method whose load the session missed.
			f = stacks.Frame{Name: AnonFrame, Kind: stacks.KindUnknown}
		}
	default:
		f = stacks.Frame{Name: stacks.UnknownFrame, Kind: stacks.KindUnknown}
	}
	i := n.frame(f)
	n.native[addr] = i
	return i
}
