package stacks

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unsafe"

	"github.com/clrspy/clrspy/analysis"
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
	// OffCPU marks time off the CPU (a wall-clock perf profile): Count
	// switch-outs with this stack, Nanos the time until the thread ran
	// again. Such samples are not in the Total/Managed/External counts.
	OffCPU bool
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
	// FoldedThreads counts threads past Options.MaxThreads whose samples
	// went to the "[other threads]" thread.
	FoldedThreads int64

	// CPUTime is set when the samples measure CPU time (a perf_event
	// cpu-clock sampler) rather than thread time between runtime samples:
	// pprof then names the value cpu/nanoseconds.
	CPUTime bool
	// Lost counts samples the source dropped (perf ring buffers that
	// overflowed).
	Lost int64
	// OffCPU is set for a wall-clock perf profile: samples with OffCPU
	// set hold the time threads spent off the CPU beside the CPU samples,
	// and pprof gets the sample types cpu and off_cpu and a state label.
	OffCPU bool
	// Notes are one-line remarks on what the profile could not do
	// ("kernel frames omitted: perf_event_paranoid is 2") and, first,
	// what makes it partial ("PARTIAL: the trace is truncated ..."):
	// writers put them where their format allows.
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
	// Symbols is a symbol table shared with other analyses of the same
	// stream, fed by the caller; nil gives the builder a table of its own
	// that it feeds itself.
	Symbols *Symbols
	// MaxThreads bounds the threads kept apart (0: DefaultMaxThreads);
	// samples of later threads go to one "[other threads]" thread.
	MaxThreads int
	// OnSample, when set, is called for every sample the profile counts,
	// in stream order (not in CompatDotnetdiag mode): the profile keeps
	// aggregates only, so callers that need when samples happened (a
	// timeline, a time-ordered export) keep it in a form of their own.
	OnSample func(RawSample)
	// StacksOnly sums samples per raw stack and kind, not per (thread,
	// stack, kind), for a caller that reads ResultStacks and records its
	// samples itself through OnSample (the report page): the sums are
	// then one per stack instead of one per thread that ran it (384,000
	// on a 1 GiB trace, 12 MB). Result's Samples all name thread 0.
	StacksOnly bool
	// Concurrent sums the samples on a second goroutine, batch by batch,
	// for a caller with a core to spare (a file read with several
	// decoders): the goroutine that feeds the builder is then the
	// profile's bottleneck. Results are the same either way.
	Concurrent bool
}

type rawKey struct {
	ips   string
	epoch uint32
}

// idRaw is the raw stack a stack id of generation gen named.
type idRaw struct {
	gen uint32
	raw int32
}

// maxByID bounds byID: ids past it (a stream with over a million stacks
// between sequence points) take the hashed path.
const maxByID = 1 << 20

type rawStack struct {
	ips   []uint64
	first int64 // ns of the first sample: the time symbols are resolved at
	epoch uint32
}

// acc is the sum of the samples of one (thread, raw stack, type), the three
// packed into key by accKey.
type acc struct {
	key          uint64
	count, nanos int64
}

func (a *acc) thread() int32             { return int32(a.key >> 36) }
func (a *acc) raw() int32                { return int32(uint32(a.key >> 4)) }
func (a *acc) typ() clrevents.SampleType { return clrevents.SampleType(a.key & 15) }

// accKey packs (thread, raw stack, type) into one word: a map keyed by it
// hashes 8 bytes, not a struct, once per sample.
func accKey(thread, raw int32, typ clrevents.SampleType) uint64 {
	return uint64(uint32(thread))<<36 | uint64(uint32(raw))<<4 | uint64(typ&15)
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

	sym    *Symbols
	ownSym bool // the builder feeds sym itself
	dd     *ddSymbols

	raws   []rawStack
	rawIdx map[rawKey]int32
	// byID remembers the raw stack of a stream stack id of one reader
	// stack generation (Event.StackGen), indexed by id: within a
	// generation an id names one list of IPs, so a sample costs an index,
	// not a hash of its IPs. Other samples (V3's inline stacks, stacks the
	// reader could not resolve) go by rawIdx.
	byID    []idRaw
	accs    accTable
	threads []Thread
	tstate  map[uint64]*threadState
	// tcache is a direct-mapped cache in front of tstate: a map lookup per
	// sample was a fifth of the builder's time (22 ns on 64 threads).
	tcache [256]tcacheEntry
	folded *threadState // the thread that stands for threads past MaxThreads

	// resolved and nativeFrame are the last Result's stacks per raw stack
	// and its [native code] frame (-1: none), for StackOf.
	resolved    [][]int32
	nativeFrame int32

	first, last int64
	// Sampler ticks: samples of one tick are written in a burst while the
	// runtime is suspended. ticks counts them; curTick and prevTick are the
	// first timestamps of the current and previous tick, lastSample the
	// latest sample's.
	ticks, curTick, prevTick, lastSample      int64
	total, managed, external, errors, dropped int64
	foldedThreads                             int64
	stats                                     analysis.Stats
}

// New returns a Builder for a stream with header hdr.
func New(hdr *nettrace.Header, opts Options) *Builder {
	p := int64(hdr.ExpectedCPUSamplingRate)
	if p <= 0 {
		p = int64(time.Millisecond)
	}
	b := &Builder{
		hdr: hdr, opts: opts, period: p,
		sym:    opts.Symbols,
		rawIdx: make(map[rawKey]int32),
		tstate: make(map[uint64]*threadState),
		first:  math.MaxInt64, last: math.MinInt64,
		curTick: math.MinInt64, prevTick: math.MinInt64, lastSample: math.MinInt64,
	}
	if b.sym == nil {
		b.sym, b.ownSym = NewSymbols(hdr), true
	}
	b.accs.conc = opts.Concurrent
	if opts.Compat == CompatDotnetdiag {
		b.dd = newDDSymbols()
	}
	return b
}

// Stats implements analysis.Analyzer: samples and, when the builder feeds
// its own symbol table, method and module events.
func (b *Builder) Stats() analysis.Stats {
	st := b.stats
	if b.ownSym && b.dd == nil {
		st.Add(b.sym.Stats())
	}
	return st
}

func (b *Builder) fail(err error) { b.stats.Failed(err) }

// Symbols is the symbol table the builder resolves with.
func (b *Builder) Symbols() *Symbols { return b.sym }

// Wants reports whether the profile uses events of m: stack samples and
// the symbol table's events (SymbolsWant). A file source may skip the
// others (source.Spec.Keep).
func Wants(m *nettrace.Metadata) bool {
	return m.Runtime == nettrace.SampleProfiler && m.EventID == clrevents.IDThreadSample || SymbolsWant(m)
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
			b.stats.Used()
			b.sample(ev, s.Type)
		}
	case nettrace.Runtime:
		if b.dd != nil {
			return // dotnetdiag reads rundown only
		}
		if b.ownSym {
			b.sym.Event(ev)
		}
	case nettrace.Rundown:
		if b.dd == nil {
			if b.ownSym {
				b.sym.Event(ev)
			}
			return
		}
		b.stats.Used()
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

type tcacheEntry struct {
	tid uint64
	t   *threadState
}

func (b *Builder) thread(tid uint64) *threadState {
	e := &b.tcache[(tid*0x9e3779b97f4a7c15)>>56]
	if e.t != nil && e.tid == tid {
		return e.t
	}
	t := b.tstate[tid]
	if t == nil {
		if len(b.threads) >= b.maxThreads() {
			// Past the bound every new thread is one: memory stays
			// proportional to the bound, not to the threads a process
			// ever made.
			if b.folded == nil {
				b.folded = &threadState{idx: int32(len(b.threads)), last: math.MinInt64, lastTick: -1}
				b.threads = append(b.threads, Thread{ID: FoldedThreadID, Name: FoldedThreadName})
			}
			b.foldedThreads++
			return b.folded
		}
		t = &threadState{idx: int32(len(b.threads)), last: math.MinInt64, lastTick: -1}
		b.tstate[tid] = t
		b.threads = append(b.threads, Thread{ID: tid})
	}
	// (Folded threads are not cached: each of their samples counts.)
	e.tid, e.t = tid, t
	return t
}

// Folded threads: the profile's stand-in for threads past MaxThreads.
const (
	FoldedThreadID   = math.MaxUint64
	FoldedThreadName = "[other threads]"
)

// DefaultMaxThreads bounds the threads a profile keeps apart.
const DefaultMaxThreads = 1 << 14

func (b *Builder) maxThreads() int {
	if b.opts.MaxThreads > 0 {
		return b.opts.MaxThreads
	}
	return DefaultMaxThreads
}

func (b *Builder) raw(ips []uint64, stackID, gen uint32, ts int64) int32 {
	epoch := b.sym.tab.unloads
	byGen := gen != 0 && stackID != 0 && stackID < maxByID && len(ips) > 0
	if byGen && int(stackID) < len(b.byID) {
		if x := b.byID[stackID]; x.gen == gen && b.raws[x.raw].epoch == epoch {
			return x.raw
		}
	}
	var s string
	if len(ips) > 0 {
		s = unsafe.String((*byte)(unsafe.Pointer(&ips[0])), len(ips)*8)
	}
	k := rawKey{s, epoch}
	i, ok := b.rawIdx[k]
	if !ok {
		cp := append([]uint64(nil), ips...)
		if len(cp) > 0 {
			k.ips = unsafe.String((*byte)(unsafe.Pointer(&cp[0])), len(cp)*8)
		}
		i = int32(len(b.raws))
		b.raws = append(b.raws, rawStack{ips: cp, first: ts, epoch: epoch})
		b.rawIdx[k] = i
	}
	if byGen {
		if int(stackID) >= len(b.byID) {
			b.byID = append(b.byID, make([]idRaw, int(stackID)+1-len(b.byID))...)
		}
		b.byID[stackID] = idRaw{gen, i}
	}
	return i
}

func (b *Builder) add(t *threadState, raw int32, typ clrevents.SampleType, count, nanos int64) {
	thread := t.idx
	if b.opts.StacksOnly {
		thread = 0
	}
	b.accs.add(accKey(thread, raw, typ), count, nanos)
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
	raw := b.raw(ev.Stack, ev.StackID, ev.StackGen, ts)
	b.add(t, raw, typ, 1, d)
	if b.opts.OnSample != nil {
		b.opts.OnSample(RawSample{Thread: ev.ThreadID, ThreadIndex: int(t.idx), Stack: raw,
			External: typ == clrevents.SampleExternal, Nanos: ts, Weight: d})
	}
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

// Release lets go of the accumulated samples once the last Result was
// made; what StackOf and Stats need stays. The Builder takes no more
// events and makes no more Results.
func (b *Builder) Release() {
	b.accs.wg.Wait() // a concurrent batch still writes the table
	b.accs = accTable{}
	b.rawIdx, b.byID, b.tstate, b.tcache = nil, nil, nil, [256]tcacheEntry{}
	for i := range b.raws {
		b.raws[i].ips = nil
	}
}

// Result resolves every stack and returns the profile so far. It may be
// called at any time; stacks are named with the symbols known then.
func (b *Builder) Result() *Profile { return b.result(true) }

// ResultStacks is Result without Samples: the frames, threads, counters
// and the stacks StackOf names, for a caller that takes its counts from a
// Timeline (the report page: its 384,000 samples on a 1 GiB trace were
// 31 MB it did not read).
func (b *Builder) ResultStacks() *Profile { return b.result(false) }

func (b *Builder) result(withSamples bool) *Profile {
	// The threads are copied: a mid-stream result must not change as the
	// builder counts more samples.
	p := &Profile{
		Threads: slices.Clone(b.threads), Compat: b.opts.Compat, PeriodNanos: b.period,
		Start: b.hdr.SyncTimeUTC,
		Total: b.total, Managed: b.managed, External: b.external, Errors: b.errors, Dropped: b.dropped,
		FoldedThreads: b.foldedThreads,
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
		b.sym.tab.freeze()
		p.Methods = len(b.sym.tab.methods)
		resolved = make([][]int32, len(b.raws))
		trunc = make([]bool, len(b.raws))
		for i := range b.raws {
			resolved[i], trunc[i] = r.stack(b.sym, b.raws[i].ips, b.raws[i].first)
		}
	}
	// Raw stacks that resolve to the same frames share one stack slice
	// (rid); accumulators of one (thread, rid, type) merge into a sample.
	rids := make([]int32, len(resolved))
	var stacksByRid [][]int32
	ridOf := make(map[string]int32)
	for i, st := range resolved {
		k := stackKey(st)
		rid, ok := ridOf[k]
		if !ok {
			rid = int32(len(stacksByRid))
			ridOf[k] = rid
			stacksByRid = append(stacksByRid, st)
		}
		rids[i] = rid
	}
	clear(ridOf)
	// External samples get a [native code] leaf, once per rid.
	var nf int32 = -1
	withNative := make(map[int32]int32)
	nativeOf := func(rid int32) int32 {
		if r, ok := withNative[rid]; ok {
			return r
		}
		if nf < 0 {
			nf = r.frame(Frame{Name: NativeFrame, Kind: KindNative})
		}
		st := stacksByRid[rid]
		out := rid
		if len(st) == 0 || st[0] != nf {
			out = int32(len(stacksByRid))
			stacksByRid = append(stacksByRid, append([]int32{nf}, st...))
		}
		withNative[rid] = out
		return out
	}
	// Deterministic output: accumulators sorted by thread, raw stack, type.
	// Accumulators of raw stacks that resolve to the same frames merge;
	// when no two raw stacks do, keys stay distinct and need no map.
	accs := b.accs.sorted()
	var merged map[uint64]int
	if withSamples && len(stacksByRid) < len(resolved) {
		merged = make(map[uint64]int, len(accs))
	}
	if withSamples {
		p.Samples = make([]Sample, 0, len(accs))
	}
	for i := range accs {
		a := &accs[i]
		rid := rids[a.raw()]
		var typ clrevents.SampleType
		if b.dd == nil {
			typ = a.typ()
			if typ == clrevents.SampleExternal {
				rid = nativeOf(rid)
			}
			for _, f := range stacksByRid[rid] {
				if p.Frames[f].Kind == KindUnknown {
					p.Unresolved += a.count
				}
			}
			if trunc[a.raw()] {
				p.Truncated += a.count
			}
		}
		if !withSamples {
			continue
		}
		if merged != nil {
			k := accKey(a.thread(), rid, typ)
			if i, ok := merged[k]; ok {
				p.Samples[i].Count += a.count
				p.Samples[i].Nanos += a.nanos
				continue
			}
			merged[k] = len(p.Samples)
		}
		p.Samples = append(p.Samples, Sample{Thread: int(a.thread()), Stack: stacksByRid[rid], Type: typ, Count: a.count, Nanos: a.nanos})
	}
	b.resolved, b.nativeFrame = resolved, nf
	slices.SortStableFunc(p.Samples, func(a, c Sample) int {
		if a.Thread != c.Thread {
			return cmp.Compare(a.Thread, c.Thread)
		}
		if a.Nanos != c.Nanos {
			return cmp.Compare(c.Nanos, a.Nanos)
		}
		return cmp.Compare(c.Count, a.Count)
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
	buf      []Frame // the frames of the stack being resolved
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

// stack resolves raw IPs (leaf first) to interned frames (leaf first).
func (r *resolver) stack(sym *Symbols, ips []uint64, ts int64) ([]int32, bool) {
	fs, trunc := sym.AppendStack(r.buf[:0], ips, ts)
	r.buf = fs
	out := make([]int32, len(fs))
	for i := range fs {
		out[i] = r.frame(fs[i])
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
