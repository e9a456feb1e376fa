package stacks

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
	"unsafe"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/nettrace"
)

// MaxStackDepth is EventPipe's stack-walk limit (EP_MAX_STACK_DEPTH): a
// stack of this many frames was probably cut, and gets a [truncated] root.
const MaxStackDepth = 100

// Names of the synthetic frames.
const (
	NativeFrame    = "[native code]"
	TruncatedFrame = "[truncated]"
	UnknownFrame   = "[unknown]"
)

// FrameKind says what a frame stands for.
type FrameKind uint8

// Frame kinds.
const (
	KindManaged   FrameKind = iota // a resolved managed method
	KindNative                     // code the runtime does not walk
	KindUnknown                    // an address no method map covers
	KindTruncated                  // the stack continued past the walk limit
	KindKernel                     // kernel code (perf_event samples)
)

// Frame is one distinct frame of a profile.
type Frame struct {
	Name   string // "Namespace.Type.Method(args)" or a synthetic name
	Module string // file name of the module ("System.Private.CoreLib.dll"); "" if unknown
	Kind   FrameKind
	// Address is the method's code start (0 for synthetic frames); Tier its
	// optimization tier when the runtime reported one.
	Address uint64
	Tier    clrevents.OptimizationTier
}

// Thread is one sampled OS thread.
type Thread struct {
	ID       uint64 // OS thread id
	Name     string // "" when no event named it
	Samples  int64
	External int64 // of Samples, taken outside managed code
}

// Sample is an aggregate of identical samples: same thread, same resolved
// stack, same sample type.
type Sample struct {
	Thread int     // index into Profile.Threads
	Stack  []int32 // indexes into Profile.Frames, leaf first
	Type   clrevents.SampleType
	Count  int64 // samples
	Nanos  int64 // thread time the samples stand for
	// Labels become pprof labels (mixed-mode samples taken during a GC:
	// gc, gc_phase). Samples with different labels are separate entries.
	Labels []Label
}

// Label is a key with a string value, or a numeric one when Str is "".
type Label struct {
	Key string
	Str string
	Num int64
}

// Profile is the result of a Builder.
type Profile struct {
	Frames  []Frame
	Threads []Thread
	Samples []Sample // sorted by thread, then by descending Nanos, then stack text

	Start         time.Time // session start (wall clock)
	DurationNanos int64     // first to last sample
	PeriodNanos   int64     // nominal sampling period
	Compat        Compat

	// Counters for the summary line.
	Total, Managed, External, Errors, Dropped int64
	Methods                                   int   // method bodies in the symbol table
	Unresolved                                int64 // frames that matched no method (samples-weighted)
	Truncated                                 int64 // samples whose stack hit the depth limit

	// CPUTime is set when the samples measure CPU time (a perf_event
	// cpu-clock sampler) rather than thread time between runtime samples:
	// pprof then names the value cpu/nanoseconds.
	CPUTime bool
	// Lost counts samples the source dropped (perf ring buffers that
	// overflowed).
	Lost int64
	// Notes are one-line remarks on what the profile could not do
	// ("kernel frames omitted: perf_event_paranoid is 2").
	Notes []string
}

// Compat selects output semantics of another tool.
type Compat uint8

// Compatibility modes.
const (
	CompatNone Compat = iota
	// CompatDotnetdiag reproduces pyroscope-io/dotnetdiag's folded stacks
	// byte for byte: rundown-only symbols named module!Namespace.Method(sig)
	// without return-address adjustment, ?!? for unresolved addresses, no
	// synthetic frames, and time credited per its thread state machine.
	CompatDotnetdiag
)

// ParseCompat maps a --compat value to a mode.
func ParseCompat(s string) (Compat, error) {
	switch s {
	case "", "none", "clrspy":
		return CompatNone, nil
	case "dotnetdiag":
		return CompatDotnetdiag, nil
	}
	return 0, fmt.Errorf("unknown --compat %q (want dotnetdiag or none)", s)
}

// Options control a Builder.
type Options struct {
	// ManagedOnly drops the time threads spent outside managed code
	// (External samples).
	ManagedOnly bool
	Compat      Compat
}

type rawKey struct {
	ips   string
	epoch uint32
}

type rawStack struct {
	ips   []uint64
	first int64 // ns of the first sample: the time symbols are resolved at
	epoch uint32
}

type accKey struct {
	thread int32
	raw    int32
	typ    clrevents.SampleType
}

type acc struct {
	count, nanos int64
}

type threadState struct {
	idx      int32
	lastTick int64 // index of the sampler tick of the previous sample
	last     int64 // ns of the previous sample; MinInt64 before the first
	// dotnetdiag state: see compat.go
	dd ddThread
}

// Builder accumulates samples and symbols from events. It keeps one entry
// per distinct (thread, stack, type), not per sample.
type Builder struct {
	hdr    *nettrace.Header
	opts   Options
	period int64

	syms *symtab
	dd   *ddSymbols
	maps []Mapping

	raws    []rawStack
	rawIdx  map[rawKey]int32
	accs    map[accKey]*acc
	threads []Thread
	tstate  map[uint64]*threadState

	first, last int64
	// Sampler ticks: samples of one tick are written in a burst while the
	// runtime is suspended. ticks counts them; curTick and prevTick are the
	// first timestamps of the current and previous tick, lastSample the
	// latest sample's.
	ticks, curTick, prevTick, lastSample      int64
	total, managed, external, errors, dropped int64
	decodeErrs                                int
	firstErr                                  error
}

// NewBuilder returns a Builder for a stream with header hdr.
func NewBuilder(hdr *nettrace.Header, opts Options) *Builder {
	p := int64(hdr.ExpectedCPUSamplingRate)
	if p <= 0 {
		p = int64(time.Millisecond)
	}
	b := &Builder{
		hdr: hdr, opts: opts, period: p,
		syms:   newSymtab(),
		rawIdx: make(map[rawKey]int32),
		accs:   make(map[accKey]*acc),
		tstate: make(map[uint64]*threadState),
		first:  math.MaxInt64, last: math.MinInt64,
		curTick: math.MinInt64, prevTick: math.MinInt64, lastSample: math.MinInt64,
	}
	if opts.Compat == CompatDotnetdiag {
		b.dd = newDDSymbols()
	}
	return b
}

// DecodeErrors reports how many events had payloads that did not decode,
// and the first such error.
func (b *Builder) DecodeErrors() (int, error) { return b.decodeErrs, b.firstErr }

func (b *Builder) fail(err error) {
	if b.decodeErrs == 0 {
		b.firstErr = err
	}
	b.decodeErrs++
}

// Event consumes one event; events the profile does not use are ignored.
func (b *Builder) Event(ev *nettrace.Event) {
	m := ev.Meta
	ptr := b.hdr.PointerSize
	switch m.Runtime {
	case nettrace.SampleProfiler:
		if m.EventID == clrevents.IDThreadSample {
			s, err := clrevents.DecodeThreadSample(ev.Payload, m.Version, ptr)
			if err != nil {
				b.fail(err)
				return
			}
			b.sample(ev, s.Type)
		}
	case nettrace.Runtime:
		if b.dd != nil {
			return // dotnetdiag reads rundown only
		}
		if err := b.syms.event(ev, b.hdr); err != nil {
			b.fail(err)
		}
	case nettrace.Rundown:
		if b.dd == nil {
			if err := b.syms.event(ev, b.hdr); err != nil {
				b.fail(err)
			}
			return
		}
		// dotnetdiag compatibility: rundown end events only.
		switch m.EventID {
		case clrevents.IDRundownMethodDCEndVerbose:
			mt, err := clrevents.DecodeMethodVerbose(ev.Payload, m.Version, ptr)
			if err != nil {
				b.fail(err)
				return
			}
			b.dd.addMethod(&mt)
		case clrevents.IDRundownDomainModuleDCEnd:
			mod, err := clrevents.DecodeDomainModule(ev.Payload, m.Version, ptr)
			if err != nil {
				b.fail(err)
				return
			}
			b.dd.addModule(&mod)
		}
	}
}

// Event ids clrevents does not name (yet).
const (
	idDomainModuleLoad           = 151 // runtime provider
	idRundownDomainModuleDCStart = 151 // rundown provider
)

func (b *Builder) thread(tid uint64) *threadState {
	t := b.tstate[tid]
	if t == nil {
		t = &threadState{idx: int32(len(b.threads)), last: math.MinInt64, lastTick: -1}
		b.tstate[tid] = t
		b.threads = append(b.threads, Thread{ID: tid})
	}
	return t
}

func (b *Builder) raw(ips []uint64, ts int64) int32 {
	var s string
	if len(ips) > 0 {
		s = unsafe.String((*byte)(unsafe.Pointer(&ips[0])), len(ips)*8)
	}
	k := rawKey{s, b.syms.unloads}
	if i, ok := b.rawIdx[k]; ok {
		return i
	}
	cp := append([]uint64(nil), ips...)
	if len(cp) > 0 {
		k.ips = unsafe.String((*byte)(unsafe.Pointer(&cp[0])), len(cp)*8)
	}
	i := int32(len(b.raws))
	b.raws = append(b.raws, rawStack{ips: cp, first: ts, epoch: k.epoch})
	b.rawIdx[k] = i
	return i
}

func (b *Builder) add(thread, raw int32, typ clrevents.SampleType, count, nanos int64) {
	k := accKey{thread, raw, typ}
	a := b.accs[k]
	if a == nil {
		a = &acc{}
		b.accs[k] = a
	}
	a.count += count
	a.nanos += nanos
}

func (b *Builder) sample(ev *nettrace.Event, typ clrevents.SampleType) {
	if b.dd != nil {
		b.ddSample(ev, typ)
		return
	}
	b.total++
	if typ != clrevents.SampleManaged && typ != clrevents.SampleExternal {
		b.errors++
		return
	}
	ts := b.hdr.Nanos(ev.Timestamp)
	b.first = min(b.first, ts)
	b.last = max(b.last, ts)
	t := b.thread(ev.ThreadID)
	th := &b.threads[t.idx]
	th.Samples++
	if typ == clrevents.SampleExternal {
		th.External++
		b.external++
	} else {
		b.managed++
	}
	// A sample stands for the time since the thread's previous sample
	// (what the thread is doing now is the best evidence for the interval
	// that led here), measured between sampler ticks so that sampler delays
	// count in full. A thread missing from the previous tick (it had no
	// managed frames, or did not exist) is credited one tick interval, not
	// the whole gap.
	b.tick(ts, t)
	d := b.period
	switch {
	case t.lastTick == b.ticks-1 && t.last != math.MinInt64:
		d = max(ts-t.last, 0)
	case b.prevTick != math.MinInt64:
		d = b.curTick - b.prevTick
	}
	t.lastTick = b.ticks
	t.last = ts
	if b.opts.ManagedOnly && typ == clrevents.SampleExternal {
		b.dropped++
		return
	}
	b.add(t.idx, b.raw(ev.Stack, ts), typ, 1, d)
}

// tick advances the sampler-tick state for a sample of thread t at ts: a
// new tick starts when the thread was already sampled in this tick or the
// samples are more than half a period apart (bursts are much tighter).
func (b *Builder) tick(ts int64, t *threadState) {
	if b.lastSample == math.MinInt64 || t.lastTick == b.ticks && t.last != math.MinInt64 || ts-b.lastSample > b.period/2 {
		b.ticks++
		b.prevTick, b.curTick = b.curTick, ts
	}
	b.lastSample = ts
}

// Profile resolves every stack and returns the profile. It may be called
// once, after the last event.
func (b *Builder) Profile() *Profile {
	p := &Profile{
		Threads: b.threads, Compat: b.opts.Compat, PeriodNanos: b.period,
		Start: b.hdr.SyncTimeUTC,
		Total: b.total, Managed: b.managed, External: b.external, Errors: b.errors, Dropped: b.dropped,
	}
	if b.last >= b.first {
		p.DurationNanos = b.last - b.first
	}
	r := resolver{p: p, frameIdx: make(map[Frame]int32)}
	var resolved [][]int32
	var trunc []bool
	if b.dd != nil {
		b.dd.freeze()
		p.Methods = len(b.dd.addrs)
		resolved = make([][]int32, len(b.raws))
		for i := range b.raws {
			resolved[i] = b.dd.resolve(&r, b.raws[i].ips)
		}
	} else {
		b.syms.freeze()
		p.Methods = len(b.syms.methods)
		resolved = make([][]int32, len(b.raws))
		trunc = make([]bool, len(b.raws))
		for i := range b.raws {
			resolved[i], trunc[i] = r.stack(b, &b.raws[i])
		}
	}
	// Merge accumulators whose raw stacks resolved to the same frames.
	type mkey struct {
		thread int32
		stack  string
		typ    clrevents.SampleType
	}
	merged := make(map[mkey]int)
	keys := make([]accKey, 0, len(b.accs))
	for k := range b.accs {
		keys = append(keys, k)
	}
	// Deterministic output whatever the map order.
	sort.Slice(keys, func(i, j int) bool {
		a, c := keys[i], keys[j]
		if a.thread != c.thread {
			return a.thread < c.thread
		}
		if a.raw != c.raw {
			return a.raw < c.raw
		}
		return a.typ < c.typ
	})
	for _, k := range keys {
		a := b.accs[k]
		st := resolved[k.raw]
		var typ clrevents.SampleType
		if b.dd == nil {
			typ = k.typ
			if typ == clrevents.SampleExternal {
				nf := r.frame(Frame{Name: NativeFrame, Kind: KindNative})
				if len(st) == 0 || st[0] != nf {
					st = append([]int32{nf}, st...)
				}
			}
			for _, f := range st {
				if p.Frames[f].Kind == KindUnknown {
					p.Unresolved += a.count
				}
			}
			if trunc[k.raw] {
				p.Truncated += a.count
			}
		}
		sk := mkey{k.thread, stackKey(st), typ}
		if i, ok := merged[sk]; ok {
			p.Samples[i].Count += a.count
			p.Samples[i].Nanos += a.nanos
			continue
		}
		merged[sk] = len(p.Samples)
		p.Samples = append(p.Samples, Sample{Thread: int(k.thread), Stack: st, Type: typ, Count: a.count, Nanos: a.nanos})
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

func stackKey(st []int32) string {
	if len(st) == 0 {
		return ""
	}
	return string(unsafe.Slice((*byte)(unsafe.Pointer(&st[0])), len(st)*4))
}

// resolver interns frames into a profile.
type resolver struct {
	p        *Profile
	frameIdx map[Frame]int32
}

func (r *resolver) frame(f Frame) int32 {
	if i, ok := r.frameIdx[f]; ok {
		return i
	}
	i := int32(len(r.p.Frames))
	r.p.Frames = append(r.p.Frames, f)
	r.frameIdx[f] = i
	return i
}

// stack resolves raw IPs (leaf first) to frames (leaf first). Addresses
// no method covers are named by their file mapping when one is known; a
// run of native-library frames becomes one [native code] frame.
func (r *resolver) stack(b *Builder, raw *rawStack) ([]int32, bool) {
	s := b.syms
	out := make([]int32, 0, len(raw.ips)+1)
	native := int32(-1)
	for i, ip := range raw.ips {
		addr := ip
		if i > 0 && addr > 0 {
			// Callers' IPs are return addresses: the byte before is still
			// inside the call instruction, so inside the calling method even
			// when the call is the method's last instruction.
			addr--
		}
		m := s.lookup(addr, raw.first)
		if m == nil {
			if mp := b.mapping(addr); mp != nil {
				if mp.native() {
					if native < 0 {
						native = r.frame(Frame{Name: NativeFrame, Kind: KindNative})
					}
					if len(out) == 0 || out[len(out)-1] != native {
						out = append(out, native)
					}
					continue
				}
				base := mp.Path[strings.LastIndexByte(mp.Path, '/')+1:]
				out = append(out, r.frame(Frame{Name: fmt.Sprintf("%s+%#x", base, addr-mp.Start+mp.Offset), Module: base, Kind: KindUnknown}))
				continue
			}
			out = append(out, r.frame(Frame{Name: UnknownFrame, Kind: KindUnknown}))
			continue
		}
		name := m.name
		if name == "" {
			name = fmt.Sprintf("method@%#x", m.start)
		}
		out = append(out, r.frame(Frame{Name: name, Module: s.modules[m.module].name, Kind: KindManaged, Address: m.start, Tier: m.tier}))
	}
	trunc := len(raw.ips) >= MaxStackDepth
	if trunc {
		out = append(out, r.frame(Frame{Name: TruncatedFrame, Kind: KindTruncated}))
	}
	return out, trunc
}

// FrameText is the frame as folded output and flame graphs show it.
func (p *Profile) FrameText(i int32) string {
	f := &p.Frames[i]
	return f.Name
}

// Label is "name (tid)", or "thread tid" for an unnamed thread.
func (t *Thread) Label() string {
	if t.Name != "" {
		return fmt.Sprintf("%s (%d)", t.Name, t.ID)
	}
	return fmt.Sprintf("thread %d", t.ID)
}

// Folded returns root-first frame texts of a sample joined by sep.
func (p *Profile) Folded(s *Sample, sep string) string {
	var b strings.Builder
	for i := len(s.Stack) - 1; i >= 0; i-- {
		b.WriteString(p.FrameText(s.Stack[i]))
		if i > 0 {
			b.WriteString(sep)
		}
	}
	return b.String()
}
