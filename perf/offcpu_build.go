package perf

import (
	"fmt"
	"hash/maphash"
	"slices"
	"time"
	"unsafe"

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
	raw    int32 // the switch-out's stack (-1: a switch-in or exit)
	kind   SampleKind
}

// offThread is a thread's switch-out still waiting for its switch-in.
type offThread struct {
	ts        int64
	raw       int32
	pending   bool
	preempted bool // the switch-out was a preemption (PERF_RECORD_SWITCH)
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
	lean             int64 // switch-outs walked from the frame-pointer chain alone (no copy, no cached walk)
}

// switchEvent buffers one switch event (under b.mu).
func (b *Builder) switchEvent(kind SampleKind, tid int, ts int64, raw int32) {
	o := &b.off
	o.events = append(o.events, switchEvent{ts: ts, thread: b.thread(tid), raw: raw, kind: kind})
	o.newest = max(o.newest, ts)
	b.first = min(b.first, ts)
	b.last = max(b.last, ts)
	if kind == KindSwitchOut {
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

var switchRank = [...]uint8{KindSwitchOut: 0, KindPreempted: 1, KindSwitchIn: 2, KindExit: 3, KindCPU: 4}

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
		case KindSwitchOut:
			if t.pending {
				o.unmatched++
			}
			*t = offThread{ts: e.ts, raw: e.raw, pending: true}
		case KindSwitchIn:
			// A switch-in with no switch-out before it: the thread was
			// off the CPU since before its events were opened.
			if t.pending {
				b.pending = append(b.pending, pendingSample{ts: t.ts, weight: e.ts - t.ts, thread: e.thread, raw: t.raw, off: true, preempted: t.preempted})
				t.pending = false
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
				b.pending = append(b.pending, pendingSample{ts: t.ts, weight: e.ts - t.ts, thread: e.thread, raw: t.raw, off: true, preempted: t.preempted})
				t.pending = false
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
				b.pending = append(b.pending, pendingSample{ts: t.ts, weight: b.last - t.ts, thread: int32(i), raw: t.raw, off: true, preempted: t.preempted})
			}
			o.atEnd++
			t.pending = false
		}
	}
}

// offNotes says what the off-CPU part of p could not account for.
func (b *Builder) offNotes(p *stacks.Profile) {
	if !b.opts.OffCPU {
		return
	}
	o := &b.off
	if o.unmatched > 0 {
		p.Notes = append(p.Notes, fmt.Sprintf("%d of %d switch-outs had no switch-in (records lost): their off-CPU time is not counted", o.unmatched, o.switches))
	}
}

// A thread blocks again and again at the same places (a loop's Sleep, a
// pool thread's wait for work): its switch-outs repeat the same user
// registers and call chains. The walk of such a switch-out is taken from
// the first one's, keyed by the IP and SP the thread entered the kernel
// with and a hash of the kernel's callchain (its kernel frames and its
// frame-pointer walk of the user stack, return addresses included): two
// different walks from identical IP, SP and return-address chain would
// need two call paths to the same instruction at the same stack depth
// through the same frame-pointer frames. At 10,000 switches per second
// this is what keeps clrspy's CPU from growing with the rate.
type switchKey struct {
	tid    int
	ip, sp uint64
	chain  uint64
}

var switchSeed = maphash.MakeSeed()

// maxWalked bounds the cache; it is emptied when full.
const maxWalked = 1 << 16

func (b *Builder) switchKeyOf(s *Sample) switchKey {
	var h maphash.Hash
	h.SetSeed(switchSeed)
	h.Write(u64bytes(s.Kernel))
	h.WriteByte(0)
	h.Write(u64bytes(s.User))
	return switchKey{tid: s.Tid, ip: s.Regs.IP, sp: s.Regs.SP, chain: h.Sum64()}
}

func u64bytes(v []uint64) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), len(v)*8)
}

// knownSwitch records a switch-out whose walk is cached (under b.mu).
func (b *Builder) knownSwitch(s *Sample) bool {
	if !s.HasRegs || b.off.walked == nil {
		return false
	}
	raw, ok := b.off.walked[b.switchKeyOf(s)]
	if ok {
		b.off.cached++
		b.switchEvent(KindSwitchOut, s.Tid, b.nanos(s.Time), raw)
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
