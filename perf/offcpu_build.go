package perf

import (
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	"github.com/clrspy/clrspy/stacks"
)

// The builder's side of off-CPU time. Switch-outs (with their walked
// stack) and switch-ins arrive from one ring per CPU, read one ring after
// the other: a thread that left CPU 0 and came back on CPU 1 can have its
// switch-in read before its switch-out. So switch events wait in a buffer
// and are paired in time order once older than switchSlack behind the
// newest one (a drain pass reads every ring well within that), or at
// Finish.

// switchSlack is how far behind the newest switch event older ones are
// paired.
const switchSlack = int64(time.Second)

type switchEvent struct {
	ts     int64 // session ns
	thread int32
	raw    int32 // the switch-out's stack (-1: a switch-in or exit, or unsampled)
	kind   SampleKind
	lean   bool // sampled by the lean event (isLean)
}

// offThread is a thread's switch-out still waiting for its switch-in.
type offThread struct {
	ts        int64
	raw       int32
	pending   bool
	preempted bool // the switch-out was a preemption (PERF_RECORD_SWITCH)
	lean      bool
}

type offCPU struct {
	// walked caches the stacks of switch-outs (see knownSwitch).
	walked  map[switchKey]int32
	events  []switchEvent
	threads []offThread // by thread index
	newest  int64
	// Switch-outs whose switch-in never came (a lost record: a note
	// says so), and threads still off the CPU when the profile ended
	// (counted until its last record, as expected of idle threads: no
	// note).
	unmatched, atEnd int64
	switches         int64
	cached           int64 // switch-outs whose walk came from the cache
	lean             int64 // switch-outs without callchains walked from their copy alone (no cached walk)

	// The sampled switch-outs' time by thread, stack and kind, and each
	// thread's time in unsampled ones (KindUnsampled; [1]: preempted),
	// spread over the former at the end (spreadUnsampled).
	sampled   map[shareKey]*offShare
	unsampled [][2]int64 // by thread index
	unplaced  int64      // unsampled time of threads with no sampled switch-out
}

type shareKey struct {
	thread, raw     int32
	preempted, lean bool
}

type offShare struct {
	nanos, ts int64
}

// switchEvent buffers one switch event (under b.mu).
func (b *Builder) switchEvent(kind SampleKind, tid int, ts int64, raw int32, lean bool) {
	o := &b.off
	o.events = append(o.events, switchEvent{ts: ts, thread: b.thread(tid), raw: raw, kind: kind, lean: lean})
	o.newest = max(o.newest, ts)
	b.first = min(b.first, ts)
	b.last = max(b.last, ts)
	if kind == KindSwitchOut || kind == KindUnsampled {
		o.switches++
	}
	// Pairing sorts the buffer: done once the oldest event is two slacks
	// behind, it takes a slack's worth of events at a time (not one event
	// per call).
	if len(o.events) >= 1024 && o.events[0].ts < o.newest-2*switchSlack {
		b.pairSwitches(o.newest - switchSlack)
		b.flush(false)
	}
}

var switchRank = [...]uint8{KindSwitchOut: 0, KindUnsampled: 0, KindPreempted: 1, KindSwitchIn: 2, KindExit: 3, KindCPU: 4}

// pairSwitches pairs, in time order, the switch events older than h.
func (b *Builder) pairSwitches(h int64) {
	o := &b.off
	// At one timestamp, a thread's events can only have happened in the
	// order switch-out, its preemption record, switch-in, exit.
	slices.SortFunc(o.events, func(x, y switchEvent) int {
		switch {
		case x.ts < y.ts:
			return -1
		case x.ts > y.ts:
			return 1
		}
		return int(switchRank[x.kind]) - int(switchRank[y.kind])
	})
	n := 0
	for n < len(o.events) && o.events[n].ts < h {
		e := &o.events[n]
		n++
		for int(e.thread) >= len(o.threads) {
			o.threads = append(o.threads, offThread{})
		}
		t := &o.threads[e.thread]
		switch e.kind {
		case KindSwitchOut, KindUnsampled:
			if t.pending {
				o.unmatched++
			}
			*t = offThread{ts: e.ts, raw: e.raw, pending: true, lean: e.lean}
		case KindSwitchIn:
			// A switch-in with no switch-out before it: the thread was
			// off the CPU since before its events were opened.
			if t.pending {
				b.offTime(t, e.thread, e.ts-t.ts)
			}
		case KindPreempted:
			// Written right after the switch-out's sample (same CPU,
			// later timestamp).
			if t.pending && e.ts >= t.ts {
				t.preempted = true
			}
		case KindExit:
			// A thread blocked when its process exits is woken to exit,
			// without a switch-in record: it was off the CPU until then.
			if t.pending {
				b.offTime(t, e.thread, e.ts-t.ts)
			}
		}
	}
	o.events = append(o.events[:0], o.events[n:]...)
}

// finishSwitches pairs every switch event left; a thread still off the
// CPU counts until the last record of the profile.
func (b *Builder) finishSwitches() {
	o := &b.off
	if len(o.events) > 0 {
		b.pairSwitches(o.newest + 1)
	}
	for i := range o.threads {
		t := &o.threads[i]
		if t.pending {
			if b.last > t.ts {
				b.offTime(t, int32(i), b.last-t.ts)
			}
			o.atEnd++
			t.pending = false
		}
	}
	b.spreadUnsampled()
}

// offTime counts the time w of thread's switch-out t, now ended: under
// its stack, or for an unsampled one in the thread's unsampled time.
func (b *Builder) offTime(t *offThread, thread int32, w int64) {
	t.pending = false
	o := &b.off
	if t.raw < 0 {
		for int(thread) >= len(o.unsampled) {
			o.unsampled = append(o.unsampled, [2]int64{})
		}
		o.unsampled[thread][b2i(t.preempted)] += w
		return
	}
	b.pending = append(b.pending, pendingSample{ts: t.ts, weight: w, thread: thread, raw: t.raw, off: true, preempted: t.preempted})
	if o.sampled == nil {
		o.sampled = make(map[shareKey]*offShare)
	}
	k := shareKey{thread, t.raw, t.preempted, t.lean}
	sh := o.sampled[k]
	if sh == nil {
		sh = &offShare{}
		o.sampled[k] = sh
	}
	sh.nanos += w
	sh.ts = t.ts
}

func b2i(v bool) int {
	if v {
		return 1
	}
	return 0
}

// isLean reports whether switch-out s came from the lean event (no
// callchains; a thread blocked when its events were opened has no
// registers and is not one).
func isLean(s *Sample) bool {
	return s.HasRegs && len(s.Kernel) == 0 && len(s.User) == 0
}

// spreadUnsampled gives each thread's unsampled time to the stacks of its
// lean-sampled switch-outs of the same kind (blocked or preempted), in
// proportion to their time: the ratio estimator. The unsampled ones are
// the switch-outs the lean event's period skipped while the full events
// were off, and the lean-sampled ones one in offSampleEvery of those
// (offcpu.go): the full events' samples (every switch-out while on) would
// weigh the places a thread blocked at just after a new one too much. A
// thread with no lean-sampled switch-out of a kind uses its full ones of
// that kind, then those of its other kind. Each unsampled nanosecond is
// counted once; a stack's count of switch-outs stays its sampled ones'.
func (b *Builder) spreadUnsampled() {
	o := &b.off
	if len(o.unsampled) == 0 {
		return
	}
	// sums[thread][kind][lean]
	sums := make([][2][2]int64, len(o.unsampled))
	for k, sh := range o.sampled {
		if int(k.thread) < len(sums) {
			sums[k.thread][b2i(k.preempted)][b2i(k.lean)] += sh.nanos
		}
	}
	// src[thread][kind]: the sampled kind and leanness that take it.
	type source struct{ kind, lean int }
	src := make([][2]source, len(o.unsampled))
	for th, u := range o.unsampled {
		for c := range 2 {
			src[th][c] = source{-1, 0}
			if u[c] == 0 {
				continue
			}
			for _, s := range [...]source{{c, 1}, {c, 0}, {1 - c, 1}, {1 - c, 0}} {
				if sums[th][s.kind][s.lean] > 0 {
					src[th][c] = s
					break
				}
			}
			if src[th][c].kind < 0 {
				o.unplaced += u[c]
			}
		}
	}
	for k, sh := range o.sampled {
		th := int(k.thread)
		if th >= len(src) {
			continue
		}
		for c := range 2 {
			if s := src[th][c]; s.kind == b2i(k.preempted) && s.lean == b2i(k.lean) {
				w := int64(float64(o.unsampled[th][c]) * float64(sh.nanos) / float64(sums[th][s.kind][s.lean]))
				b.pending = append(b.pending, pendingSample{ts: sh.ts, weight: w, thread: k.thread, raw: k.raw, off: true, preempted: c == 1, spread: true})
			}
		}
	}
	o.unsampled = o.unsampled[:0]
	clear(o.sampled)
}

// offNotes says what the off-CPU part of p could not account for.
func (b *Builder) offNotes(p *stacks.Profile) {
	if !b.opts.OffCPU {
		return
	}
	o := &b.off
	if o.unplaced > 0 {
		p.Notes = append(p.Notes, fmt.Sprintf("%s off the CPU in unsampled switch-outs of threads with no sampled one is not counted", time.Duration(o.unplaced)))
	}
	if o.unmatched > 0 {
		p.Notes = append(p.Notes, fmt.Sprintf("%d of %d switch-outs had no switch-in (records lost): their off-CPU time is not counted", o.unmatched, o.switches))
	}
}

// A thread blocks again and again at the same places (a loop's Sleep, a
// pool thread's wait for work): its switch-outs repeat the same user
// registers and return addresses. The walk of such a switch-out is taken
// from the first one's, keyed by the IP and SP the thread entered the
// kernel with and the return addresses of the frame-pointer chain from
// its RBP inside the stack copy: two different walks from identical IP,
// SP and return-address chain would need two call paths to the same
// instruction at the same stack depth through the same frame-pointer
// frames. The key is made from what both of the sampler's switch-out
// events carry (registers and copy; the lean one has no callchains,
// offcpu.go), so a lean switch-out finds the walk of a full one, kernel
// frames and the frame-pointer chain beyond the copy included. A native
// frame that uses RBP as a general register (glibc's pthread_cond_wait)
// leaves a chain that ends at once: the key is then the IP and SP alone.
// The kernel frames are the first switch-out's: a thread blocking from
// the same user stack in another kernel path (the same read on a socket
// rather than a pipe) keeps the first one's. At 10,000 switches per
// second this is what keeps clrspy's CPU from growing with the rate.
type switchKey struct {
	tid    int
	ip, sp uint64
	chain  uint64
}

// chainHash hashes the return addresses of the frame-pointer chain from
// RBP within s's stack copy (at most 64 frames).
func chainHash(s *Sample) uint64 {
	le := binary.LittleEndian
	base, end := s.Regs.SP, s.Regs.SP+uint64(len(s.Stack))
	h := uint64(0x9e3779b97f4a7c15)
	fp := s.Regs.BP
	for n := 0; n < 64 && fp >= base && fp+16 <= end && fp&7 == 0; n++ {
		off := fp - base
		h = (h ^ le.Uint64(s.Stack[off+8:])) * 0xbf58476d1ce4e5b9
		h ^= h >> 31
		next := le.Uint64(s.Stack[off:])
		if next <= fp {
			break
		}
		fp = next
	}
	return h
}

// maxWalked bounds the cache; it is emptied when full.
const maxWalked = 1 << 16

func (b *Builder) switchKeyOf(s *Sample) switchKey {
	return switchKey{tid: s.Tid, ip: s.Regs.IP, sp: s.Regs.SP, chain: chainHash(s)}
}

// knownSwitch records a switch-out whose walk is cached (under b.mu).
func (b *Builder) knownSwitch(s *Sample) bool {
	if !s.HasRegs || b.off.walked == nil {
		return false
	}
	raw, ok := b.off.walked[b.switchKeyOf(s)]
	if ok {
		b.off.cached++
		b.switchEvent(KindSwitchOut, s.Tid, b.nanos(s.Time), raw, isLean(s))
	}
	return ok
}

// rememberSwitch caches a switch-out's walk.
func (b *Builder) rememberSwitch(s *Sample, raw int32) {
	if !s.HasRegs {
		return
	}
	if b.off.walked == nil || len(b.off.walked) >= maxWalked {
		b.off.walked = make(map[switchKey]int32)
	}
	b.off.walked[b.switchKeyOf(s)] = raw
}
