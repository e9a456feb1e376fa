package unwind

import "encoding/binary"

// Regs are the registers a walk starts from: a sample's user registers.
// Only the ones CFI rules of x86-64 code refer to are kept.
type Regs struct {
	IP, SP, BP             uint64
	BX, R12, R13, R14, R15 uint64
}

// Stack is a copy of user stack memory: Data holds the bytes at addresses
// Base, Base+1, ... (Base is the stack pointer when the copy was taken).
type Stack struct {
	Base uint64
	Data []byte
}

// Finder says what code is at an address.
type Finder interface {
	// Find returns the CFI table of the file mapped at pc and the bias to
	// subtract from pc to get an address in that file (pc-bias). t is nil
	// for code without CFI (JIT'd code, a file without .eh_frame): the walk
	// then follows frame pointers. known reports whether pc lies in
	// executable memory at all; a return address that does not ends the
	// walk.
	Find(pc uint64) (t *Table, bias uint64, known bool)
}

// End says why a walk stopped.
type End uint8

// Ends of a walk.
const (
	EndOutermost End = iota // the outermost frame (return address undefined or 0)
	EndStack                // the next frame's data is past the copied stack
	EndBroken               // no rule, or a rule that made no progress or pointed nowhere
	EndDepth                // out had no more room
)

func (e End) String() string {
	switch e {
	case EndOutermost:
		return "outermost"
	case EndStack:
		return "stack copy exhausted"
	case EndBroken:
		return "broken frame"
	case EndDepth:
		return "depth limit"
	}
	return "unknown"
}

// state is the register file during a walk, indexed by DWARF number.
type state struct {
	v     [nRegs]uint64
	valid uint32
}

func (s *state) set(reg int, v uint64) { s.v[reg] = v; s.valid |= 1 << reg }
func (s *state) has(reg int) bool      { return s.valid&(1<<reg) != 0 }

// calleeSaved are the registers recovered through CFI besides RSP.
var calleeSaved = [...]int{RegRBX, RegRBP, RegR12, RegR13, RegR14, RegR15}

// read loads the 8 bytes at addr from the copy: ok false when they are
// not in it; below reports whether addr was under the copy's base (a
// corrupt frame rather than a short copy).
func (st *Stack) read(addr uint64) (v uint64, ok, below bool) {
	if addr < st.Base {
		return 0, false, true
	}
	off := addr - st.Base
	if off > uint64(len(st.Data)) || uint64(len(st.Data))-off < 8 {
		return 0, false, false
	}
	return binary.LittleEndian.Uint64(st.Data[off:]), true, false
}

// Unwind walks the stack from regs and appends the instruction pointers
// it finds, the sampled IP first, then each caller's return address, to
// out, up to cap(out) entries. It does not allocate when out has room.
//
// Each frame is unwound with the CFI of its code when the Finder has a
// table covering it, else by following the frame pointer: the JIT's code
// keeps RBP frames ([RBP] = caller's RBP, [RBP+8] = return address).
func Unwind(regs *Regs, st *Stack, f Finder, out []uint64) ([]uint64, End) {
	var s state
	s.set(RegRSP, regs.SP)
	s.set(RegRBP, regs.BP)
	s.set(RegRBX, regs.BX)
	s.set(RegR12, regs.R12)
	s.set(RegR13, regs.R13)
	s.set(RegR14, regs.R14)
	s.set(RegR15, regs.R15)
	pc := regs.IP
	if len(out) == cap(out) {
		return out, EndDepth
	}
	out = append(out, pc)
	// A return address points after the call: look it up one byte back so
	// a call that is the function's last instruction stays inside it. The
	// sampled IP and the IP of a signal frame are exact.
	exact := true
	var r Rule
	for len(out) < cap(out) {
		lookup := pc
		if !exact {
			lookup--
		}
		t, bias, known := f.Find(lookup)
		if !known && len(out) > 1 {
			return out, EndBroken
		}
		var ra uint64
		sp := s.v[RegRSP]
		if t != nil && t.Find(lookup-bias, &r) {
			cfa, ok := cfaOf(&r, &s, pc)
			if !ok {
				return out, EndBroken
			}
			var end End
			ra, end, ok = recoverRA(&r.regs[RegRA], &s, st, cfa)
			if !ok {
				return out, end
			}
			var next state
			for _, reg := range calleeSaved {
				v, ok := recoverReg(&r.regs[reg], &s, st, cfa, reg)
				if ok {
					next.set(reg, v)
				}
			}
			next.set(RegRSP, cfa)
			s = next
			exact = r.Signal
		} else {
			// Frame pointers.
			var end End
			var ok bool
			entry := s
			ra, end, ok = fpStep(&s, st, sp)
			if !ok && len(out) == 1 {
				// A leaf caught before its frame exists (at its first
				// instruction, or after "push rbp"): RBP still holds
				// the caller's value, which code without frame pointers
				// may use for anything. The return address is on top.
				ra, ok = leafStep(&s, st, f)
			}
			scanned := false
			if !ok && end != EndOutermost {
				// JIT'd code with an RSP-based frame: the JIT omits the
				// frame pointer in methods it can address off RSP (an
				// [UnmanagedCallersOnly] comparer that calls another
				// method is one), so RBP still holds whatever its native
				// caller left there. Its return address is the first
				// word above SP that points into code.
				s = entry
				ra, ok = scanStep(&s, st, f, &r)
				scanned = ok
			}
			if !ok {
				return out, end
			}
			exact = false
			// An OSR method's frame record links past the Tier0 frame it
			// was entered from: the record of that frame lies between.
			if !scanned {
				if ra2, ok := osrFrame(&s, st, sp, f); ok && len(out)+1 < cap(out) {
					out = append(out, ra)
					ra = ra2
				}
			}
		}
		if ra == 0 {
			return out, EndOutermost
		}
		if s.v[RegRSP] <= sp {
			return out, EndBroken
		}
		out = append(out, ra)
		pc = ra
	}
	return out, EndDepth
}

// fpStep unwinds one frame-pointer frame: [RBP] is the caller's RBP,
// [RBP+8] the return address.
func fpStep(s *state, st *Stack, sp uint64) (uint64, End, bool) {
	if !s.has(RegRBP) {
		return 0, EndBroken, false
	}
	bp := s.v[RegRBP]
	if bp == 0 {
		// The ABI zeroes RBP in the outermost frame (_start, thread
		// entry) of code without CFI.
		return 0, EndOutermost, false
	}
	if bp < sp || bp&7 != 0 {
		return 0, EndBroken, false
	}
	saved, ok, below := st.read(bp)
	if !ok {
		return 0, endOf(below), false
	}
	ra, ok, below := st.read(bp + 8)
	if !ok {
		return 0, endOf(below), false
	}
	*s = state{}
	s.set(RegRSP, bp+16)
	s.set(RegRBP, saved)
	return ra, 0, true
}

// osrScan bounds the search for a skipped frame record.
const osrScan = 4096

// osrFrame finds the frame record that a frame-pointer step just skipped:
// the .NET JIT's on-stack-replacement (OSR) methods run on top of their
// Tier0 method's frame, and their own record holds the Tier0 method's
// caller's RBP, with a pseudo return address into the Tier0 code. The
// Tier0 frame's own record is still there, between the OSR frame and its
// caller's frame: a slot holding that same caller RBP followed by a return
// address. Of several such slots the highest is taken: lower ones are
// stale records of calls the Tier0 code made earlier, left in its frame.
// s is the state after the step (RSP just past the OSR record, RBP the
// caller's); sp0 the OSR frame's stack pointer.
func osrFrame(s *state, st *Stack, sp0 uint64, f Finder) (uint64, bool) {
	caller := s.v[RegRBP]
	lo := s.v[RegRSP]
	if caller <= lo || caller-lo > osrScan || lo < sp0 {
		return 0, false
	}
	for x := (caller - 16) &^ 7; x >= lo && x >= 8; x -= 8 {
		v, ok, _ := st.read(x)
		if !ok {
			return 0, false
		}
		if v != caller {
			continue
		}
		ra, ok, _ := st.read(x + 8)
		if !ok || ra == 0 {
			return 0, false
		}
		if _, _, known := f.Find(ra - 1); known {
			s.set(RegRSP, x+16)
			return ra, true
		}
	}
	return 0, false
}

// leafStep unwinds a leaf that has not pushed a frame: the return
// address at [RSP] (nothing pushed yet), else at [RSP+8] with the
// caller's RBP at [RSP] (after "push rbp"). A candidate counts only when
// it points into executable memory.
func leafStep(s *state, st *Stack, f Finder) (uint64, bool) {
	sp := s.v[RegRSP]
	code := func(a uint64) bool {
		if a == 0 {
			return false
		}
		_, _, known := f.Find(a - 1)
		return known
	}
	if v, ok, _ := st.read(sp); ok && code(v) {
		bp, hasBP := s.v[RegRBP], s.has(RegRBP)
		*s = state{}
		s.set(RegRSP, sp+8)
		if hasBP {
			s.set(RegRBP, bp)
		}
		return v, true
	}
	saved, ok1, _ := st.read(sp)
	v, ok2, _ := st.read(sp + 8)
	if ok1 && ok2 && code(v) {
		*s = state{}
		s.set(RegRSP, sp+16)
		s.set(RegRBP, saved)
		return v, true
	}
	return 0, false
}

// scanLimit bounds the search for the return address of a frame without
// a frame record: the JIT's RSP-based frames are small (spilled
// callee-saved registers, a few locals, a reverse P/Invoke frame).
const scanLimit = 512

// scanStep unwinds a frame of code without CFI whose frame pointer is not
// a frame record: the return address is the lowest word above SP that
// points into executable memory and, where that code has CFI, into a
// range its table covers (data such as heap pointers and counters is not
// code). Callee-saved registers the frame pushed cannot be told apart,
// so only RBP is kept: an RSP-based JIT frame leaves it to its caller.
func scanStep(s *state, st *Stack, f Finder, r *Rule) (uint64, bool) {
	sp := s.v[RegRSP]
	for x := sp; x < sp+scanLimit; x += 8 {
		v, ok, _ := st.read(x)
		if !ok {
			return 0, false
		}
		if v < 4096 {
			continue
		}
		t, bias, known := f.Find(v - 1)
		if !known || t != nil && !t.Find(v-1-bias, r) {
			continue
		}
		bp, hasBP := s.v[RegRBP], s.has(RegRBP)
		*s = state{}
		s.set(RegRSP, x+8)
		if hasBP {
			s.set(RegRBP, bp)
		}
		return v, true
	}
	return 0, false
}

func endOf(below bool) End {
	if below {
		return EndBroken
	}
	return EndStack
}

// cfaOf computes the canonical frame address of row r.
func cfaOf(r *Rule, s *state, pc uint64) (uint64, bool) {
	switch r.CFAReg {
	case cfaExprPLT:
		if !s.has(RegRSP) {
			return 0, false
		}
		cfa := s.v[RegRSP] + 8
		if int64(pc&15) >= r.CFAOffset {
			cfa += 8
		}
		return cfa, true
	case cfaExpr:
		return 0, false
	}
	if int(r.CFAReg) >= nRegs || !s.has(int(r.CFAReg)) {
		return 0, false
	}
	return s.v[r.CFAReg] + uint64(r.CFAOffset), true
}

// recoverRA recovers the return address.
func recoverRA(rr *regRule, s *state, st *Stack, cfa uint64) (uint64, End, bool) {
	switch rr.kind {
	case ruleUndefined:
		return 0, EndOutermost, false
	case ruleOffset:
		v, ok, below := st.read(cfa + uint64(rr.off))
		if !ok {
			return 0, endOf(below), false
		}
		return v, 0, true
	case ruleValOffset:
		return cfa + uint64(rr.off), 0, true
	case ruleRegister:
		if s.has(int(rr.reg)) {
			return s.v[rr.reg], 0, true
		}
	}
	return 0, EndBroken, false
}

// recoverReg recovers callee-saved register reg of the caller.
func recoverReg(rr *regRule, s *state, st *Stack, cfa uint64, reg int) (uint64, bool) {
	switch rr.kind {
	case ruleSame:
		return s.v[reg], s.has(reg)
	case ruleOffset:
		v, ok, _ := st.read(cfa + uint64(rr.off))
		return v, ok
	case ruleValOffset:
		return cfa + uint64(rr.off), true
	case ruleRegister:
		return s.v[rr.reg], s.has(int(rr.reg))
	}
	return 0, false
}

// Splice continues a walk that stopped early with chain, a frame-pointer
// walk of the same stack made elsewhere (the kernel's user callchain,
// PERF_SAMPLE_CALLCHAIN: the sampled IP first). It looks for the deepest
// address of out (after the leaf) that also occurs in chain, drops what
// out has past it (a broken walk's last address can be garbage) and
// appends what chain has past it, up to cap(out). Of several occurrences
// in chain (recursion), the one whose depth is closest to out's is taken:
// the kernel's walk can only have skipped frames near the leaf, where
// frame pointers were missing. It reports whether it appended anything.
func Splice(out, chain []uint64) ([]uint64, bool) {
	if len(out) < 2 || len(chain) < 2 {
		return out, false
	}
	for k := len(out) - 1; k >= 1; k-- {
		best := -1
		for i := 1; i < len(chain); i++ {
			if chain[i] == out[k] && (best < 0 || abs(i-k) < abs(best-k)) {
				best = i
			}
		}
		if best < 0 {
			continue
		}
		if best+1 >= len(chain) {
			return out, false
		}
		out = out[:k+1]
		for _, ip := range chain[best+1:] {
			if len(out) == cap(out) {
				break
			}
			out = append(out, ip)
		}
		return out, true
	}
	return out, false
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
