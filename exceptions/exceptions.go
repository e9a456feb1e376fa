package exceptions

import (
	"encoding/binary"
	"strings"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/stacks"
)

// Default bounds (Options): with them a session holds at most a few MB
// whatever its length or the variety of its exceptions.
const (
	DefaultMaxTypes      = 256
	DefaultMaxStacks     = 4096
	DefaultMaxPatterns   = 1024
	DefaultMaxCatchSites = 1024
	// maxPairs bounds the (type, stack) and (type, catch site) counts.
	maxPairs = 16384
	// maxThreads bounds the threads whose dispatches are followed; past
	// it the table starts over (open dispatches then end unseen: counted).
	maxThreads = 8192
	// maxDepth bounds the exceptions open at once on one thread (nested
	// throws from filters, finallys and catch blocks).
	maxDepth = 16
	// maxBins bounds the timeline: past it adjacent bins merge.
	maxBins = 600
)

// Names of the entries that hold what comes past a bound.
const (
	OtherTypes      = "[other types]"
	OtherStacks     = "[other stacks]"
	OtherPatterns   = "[other patterns]"
	OtherCatchSites = "[other catch sites]"
	NoStack         = "[no stack]"
)

// Options configure an Analyzer.
type Options struct {
	// Symbols names the throw stacks (fed by the caller with the same
	// stream); nil leaves them as addresses.
	Symbols *stacks.Symbols
	// Bounds (0: the Default* values).
	MaxTypes, MaxStacks, MaxPatterns, MaxCatchSites int
	// BinNs is the timeline's first bin width (0: one second); it doubles
	// whenever the timeline would pass its bound.
	BinNs int64
}

// Analyzer accumulates exception state. Create it with New, feed every
// event with Event, then call Result.
type Analyzer struct {
	hdr     *nettrace.Header
	ptrSize int
	sym     *stacks.Symbols
	opts    Options

	used, decodeErrors uint64
	firstErr           error

	typeIdx map[string]int32 // the type's UTF-16 bytes → index into types
	types   []typeAcc        // types[0] is OtherTypes

	patIdx map[string]int32 // type index (4 bytes) + folded message → index into pats
	pats   []patAcc

	stk   stacks.Table // [0] is the empty stack, [1] OtherStacks
	sites []string     // each stack's throw site once named (Summary)

	throws  map[pairKey]int64 // (type, stack) → exceptions
	catchIx map[string]int32  // method name's UTF-16 bytes → index into catchNames
	catchN  []string          // [0] is OtherCatchSites
	catches map[pairKey]int64 // (type, catch site) → catches

	threads map[uint64]*thread

	bins  []int64
	binNs int64

	thrown, rethrown, nested      int64
	caught, uncaught              int64
	finallys, filters             int64
	catchNoThrow, stopNoThrow     int64
	foldedTypes, foldedStacks     int64
	foldedPatterns, foldedCatches int64
	threadResets, depthDrops      int64
	sawStop, sawCatch             bool
	foldBuf                       []byte
}

type typeAcc struct {
	name             string
	count            int64
	caught, uncaught int64
}

type patAcc struct {
	typ     int32
	pattern string
	example string
	count   int64
}

type pairKey struct{ a, b int32 }

// open is one exception being dispatched on a thread.
type open struct {
	typ    int32
	caught bool
}

type thread struct {
	open []open
	// stale counts caught exceptions whose catch a later throw left:
	// their ExceptionThrownStop may or may not come.
	stale int
}

// New returns an analyzer for a stream with header hdr (for the clock and
// the pointer size).
func New(hdr *nettrace.Header, opts Options) *Analyzer {
	ps := hdr.PointerSize
	if ps != 4 {
		ps = 8
	}
	if opts.MaxTypes <= 0 {
		opts.MaxTypes = DefaultMaxTypes
	}
	if opts.MaxStacks <= 0 {
		opts.MaxStacks = DefaultMaxStacks
	}
	if opts.MaxPatterns <= 0 {
		opts.MaxPatterns = DefaultMaxPatterns
	}
	if opts.MaxCatchSites <= 0 {
		opts.MaxCatchSites = DefaultMaxCatchSites
	}
	if opts.BinNs <= 0 {
		opts.BinNs = 1e9
	}
	a := &Analyzer{
		hdr: hdr, ptrSize: ps, sym: opts.Symbols, opts: opts,
		typeIdx: make(map[string]int32),
		types:   []typeAcc{{name: OtherTypes}},
		patIdx:  make(map[string]int32),
		throws:  make(map[pairKey]int64),
		catchIx: make(map[string]int32),
		catchN:  []string{OtherCatchSites},
		catches: make(map[pairKey]int64),
		threads: make(map[uint64]*thread),
		binNs:   opts.BinNs,
	}
	a.stk.Reserve() // the empty stack
	a.stk.Reserve() // OtherStacks
	return a
}

// Stats implements analysis.Analyzer.
func (a *Analyzer) Stats() analysis.Stats {
	return analysis.Stats{Events: a.used, DecodeErrors: a.decodeErrors, FirstError: a.firstErr}
}

func (a *Analyzer) check(err error) bool {
	if err != nil {
		if a.decodeErrors == 0 {
			a.firstErr = err
		}
		a.decodeErrors++
		return false
	}
	return true
}

// Event feeds one event; events other than the exception events are
// ignored.
func (a *Analyzer) Event(ev *nettrace.Event) {
	m := ev.Meta
	if m.Runtime != nettrace.Runtime {
		return
	}
	switch m.EventID {
	case clrevents.IDExceptionThrown:
		a.used++
		a.throw(ev)
	case clrevents.IDExceptionCatchStart:
		a.used++
		a.catch(ev)
	case clrevents.IDExceptionFinallyStart, clrevents.IDExceptionFilterStart:
		a.used++
		if _, _, err := clrevents.DecodeExceptionHandlingRaw(ev.Payload, m.Version, a.ptrSize); a.check(err) {
			if m.EventID == clrevents.IDExceptionFinallyStart {
				a.finallys++
			} else {
				a.filters++
			}
		}
	case clrevents.IDExceptionCatchStop, clrevents.IDExceptionFinallyStop, clrevents.IDExceptionFilterStop:
		a.used++
	case clrevents.IDExceptionThrownStop:
		a.used++
		a.stop(ev)
	}
}

func (a *Analyzer) throw(ev *nettrace.Event) {
	e, typ, msg, err := clrevents.DecodeExceptionThrownRaw(ev.Payload, ev.Meta.Version, a.ptrSize)
	if !a.check(err) {
		return
	}
	a.thrown++
	if e.Flags&clrevents.ExceptionRethrown != 0 {
		a.rethrown++
	}
	if e.Flags&clrevents.ExceptionNested != 0 {
		a.nested++
	}
	ti := a.typeOf(typ)
	a.types[ti].count++
	a.pattern(ti, msg)
	si := a.intern(ev.Stack, ev.Timestamp)
	k := pairKey{ti, si}
	if _, ok := a.throws[k]; !ok && len(a.throws) >= maxPairs {
		a.foldedStacks++
		k.b = 1
	}
	a.throws[k]++
	a.tick(ev.Timestamp)

	t := a.thread(ev.ThreadID)
	switch {
	case !a.sawStop && e.Flags&clrevents.ExceptionNested == 0:
		// Without ExceptionThrownStop a new throw that is not nested
		// means the thread's earlier dispatches ended: close them now.
		for len(t.open) > 0 {
			a.end(t)
		}
	default:
		// A throw from a catch block leaves that catch (the runtime sends
		// no stop for the exception it had caught, and does not flag the
		// new one nested): caught exceptions on top are done. Their stop
		// may still come (the new exception was caught inside the catch
		// block): stale lets it pass unreported.
		for len(t.open) > 0 && t.open[len(t.open)-1].caught {
			t.open = t.open[:len(t.open)-1]
			t.stale++
		}
	}
	if len(t.open) >= maxDepth {
		// The outermost is forgotten (its end will not be seen).
		copy(t.open, t.open[1:])
		t.open = t.open[:len(t.open)-1]
		a.depthDrops++
	}
	t.open = append(t.open, open{typ: ti})
}

func (a *Analyzer) catch(ev *nettrace.Event) {
	_, name, err := clrevents.DecodeExceptionHandlingRaw(ev.Payload, ev.Meta.Version, a.ptrSize)
	if !a.check(err) {
		return
	}
	a.sawCatch = true
	t := a.thread(ev.ThreadID)
	// The innermost open exception is the one this catch is for. It may
	// be caught already: a rethrow (throw;) sends no new ExceptionThrown,
	// only the next catch's start. Every catch entered is a catch site;
	// the exception is counted caught once.
	if len(t.open) == 0 {
		a.catchNoThrow++
		return
	}
	o := &t.open[len(t.open)-1]
	if !o.caught {
		o.caught = true
		a.caught++
		a.types[o.typ].caught++
	}
	ci, ok := a.catchIx[string(name)]
	if !ok {
		if len(a.catchN) > a.opts.MaxCatchSites {
			ci = 0
		} else {
			s, _, _ := nettrace.DecodeUTF16Z(name)
			ci = int32(len(a.catchN))
			a.catchN = append(a.catchN, CatchName(s))
			a.catchIx[string(name)] = ci
		}
	}
	if ci == 0 {
		a.foldedCatches++
	}
	k := pairKey{o.typ, ci}
	if _, ok := a.catches[k]; !ok && len(a.catches) >= maxPairs {
		a.foldedCatches++
		k.b = 0
	}
	a.catches[k]++
}

func (a *Analyzer) stop(ev *nettrace.Event) {
	a.sawStop = true
	t := a.threads[ev.ThreadID]
	if t == nil || len(t.open) == 0 {
		if t != nil && t.stale > 0 {
			t.stale--
			return
		}
		a.stopNoThrow++
		return
	}
	a.end(t)
}

// end closes the thread's innermost open exception.
func (a *Analyzer) end(t *thread) {
	o := t.open[len(t.open)-1]
	t.open = t.open[:len(t.open)-1]
	if !o.caught {
		a.uncaught++
		a.types[o.typ].uncaught++
	}
}

func (a *Analyzer) thread(tid uint64) *thread {
	t := a.threads[tid]
	if t == nil {
		if len(a.threads) >= maxThreads {
			for _, o := range a.threads {
				a.depthDrops += int64(len(o.open))
			}
			clear(a.threads)
			a.threadResets++
		}
		t = &thread{open: make([]open, 0, 4)}
		a.threads[tid] = t
	}
	return t
}

// typeOf returns the index of the type named by UTF-16 bytes typ.
func (a *Analyzer) typeOf(typ []byte) int32 {
	if i, ok := a.typeIdx[string(typ)]; ok {
		return i
	}
	if len(a.types) > a.opts.MaxTypes {
		a.foldedTypes++
		return 0
	}
	name, _, _ := nettrace.DecodeUTF16Z(typ)
	if name == "" {
		name = "[unnamed]"
	}
	i := int32(len(a.types))
	a.types = append(a.types, typeAcc{name: name})
	a.typeIdx[string(typ)] = i
	return i
}

func (a *Analyzer) pattern(ti int32, msg []byte) {
	b := binary.LittleEndian.AppendUint32(a.foldBuf[:0], uint32(ti))
	b = Fold(b, msg)
	a.foldBuf = b
	if i, ok := a.patIdx[string(b)]; ok {
		a.pats[i].count++
		return
	}
	if len(a.pats) >= a.opts.MaxPatterns {
		a.foldedPatterns++
		b = append(b[:4], OtherPatterns...)
		a.foldBuf = b
		if i, ok := a.patIdx[string(b)]; ok {
			a.pats[i].count++
			return
		}
	}
	p := patAcc{typ: ti, pattern: string(b[4:]), count: 1}
	if len(msg) >= 2 && string(b[4:]) != OtherPatterns {
		ex, _, _ := nettrace.DecodeUTF16Z(msg)
		if len(ex) > MaxPatternBytes {
			ex = ex[:MaxPatternBytes] + "…"
		}
		p.example = ex
	}
	a.patIdx[string(b)] = int32(len(a.pats))
	a.pats = append(a.pats, p)
}

// intern stores a copy of a stack once and returns its index: 0 is the
// empty stack, 1 the stacks past MaxStacks.
func (a *Analyzer) intern(stack []uint64, ts int64) int32 {
	if len(stack) == 0 {
		return 0
	}
	id, ok := a.stk.Intern(stack, ts, a.opts.MaxStacks+2)
	if !ok {
		a.foldedStacks++
		return 1
	}
	return id
}

// tick counts one exception in the timeline, whose bins start at the
// session's start.
func (a *Analyzer) tick(ts int64) {
	ns := a.hdr.Nanos(ts)
	if ns < 0 {
		ns = 0
	}
	i := ns / a.binNs
	for i >= maxBins {
		// Merge adjacent bins: the timeline keeps its length bound and
		// its total.
		for j := 0; j < len(a.bins); j += 2 {
			s := a.bins[j]
			if j+1 < len(a.bins) {
				s += a.bins[j+1]
			}
			a.bins[j/2] = s
		}
		a.bins = a.bins[:(len(a.bins)+1)/2]
		a.binNs *= 2
		i = ns / a.binNs
	}
	for int64(len(a.bins)) <= i {
		a.bins = append(a.bins, 0)
	}
	a.bins[i]++
}

// CatchName turns the runtime's name of a catching method,
// "<return type> [<assembly>] <Namespace.Type>::<Method>(<args>)", into
// the stacks' form "<Namespace.Type>.<Method>(<args>)", so a catch site
// reads like a throw site; a name of another form is kept as it is.
func CatchName(s string) string {
	i := strings.Index(s, " [")
	if i < 0 {
		return s
	}
	j := strings.Index(s[i:], "] ")
	if j < 0 {
		return s
	}
	rest := s[i+j+2:]
	k := strings.Index(rest, "::")
	if k < 0 {
		return s
	}
	return rest[:k] + "." + rest[k+2:]
}

// Wants reports whether the analysis reads events of m: the exception
// thrown event and the exception handling (catch, finally, filter, stop)
// events. Sessions derive their keywords from it (clrevents.ProvidersFor).
func Wants(m *nettrace.Metadata) bool {
	if m.Runtime != nettrace.Runtime {
		return false
	}
	switch m.EventID {
	case clrevents.IDExceptionThrown, clrevents.IDExceptionCatchStart, clrevents.IDExceptionCatchStop,
		clrevents.IDExceptionFinallyStart, clrevents.IDExceptionFinallyStop, clrevents.IDExceptionFilterStart,
		clrevents.IDExceptionFilterStop, clrevents.IDExceptionThrownStop:
		return true
	}
	return false
}
