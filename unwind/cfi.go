package unwind

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
)

// DWARF register numbers of x86-64 (System V psABI, figure 3.36) that the
// unwinder tracks.
const (
	RegRBX = 3
	RegRBP = 6
	RegRSP = 7
	RegR12 = 12
	RegR13 = 13
	RegR14 = 14
	RegR15 = 15
	RegRA  = 16 // the return address column
	nRegs  = 17
)

// Pointer encodings (DW_EH_PE_*) of .eh_frame and .eh_frame_hdr.
const (
	peAbsptr  = 0x00
	peUleb128 = 0x01
	peUdata2  = 0x02
	peUdata4  = 0x03
	peUdata8  = 0x04
	peSleb128 = 0x09
	peSdata2  = 0x0a
	peSdata4  = 0x0b
	peSdata8  = 0x0c
	pePcrel   = 0x10
	peTextrel = 0x20
	peDatarel = 0x30
	peFuncrel = 0x40
	peAligned = 0x50
	peIndir   = 0x80
	peOmit    = 0xff
)

// How a register is recovered (the rules of DWARF 5 §6.4.1 that .eh_frame
// uses).
const (
	ruleUndefined uint8 = iota // not recoverable (the RA column: outermost frame)
	ruleSame                   // unchanged from the callee
	ruleOffset                 // saved at CFA+off
	ruleValOffset              // the value is CFA+off
	ruleRegister               // in another register
	ruleExpr                   // a DWARF expression: not evaluated, the register becomes unknown
)

// cfaExpr is Rule.CFAReg for a CFA given by an expression. The only one
// seen in practice on x86-64 is the PLT's (rsp+8, +8 more past the push in
// the second half of a 16-byte entry); it is recognised and evaluated,
// others stop the walk.
const (
	cfaExpr    = 0xfe
	cfaExprPLT = 0xfd
)

// regRule is one column of a CFI row.
type regRule struct {
	kind uint8
	reg  uint8 // ruleRegister
	off  int64
}

// Rule is the unwind row for one address: how to compute the canonical
// frame address (CFA = CFAReg + CFAOffset) and where the caller's
// registers are.
type Rule struct {
	CFAReg    uint8
	CFAOffset int64
	regs      [nRegs]regRule
	Signal    bool // the CIE's 'S' augmentation: a signal frame, the RA is not a call site
}

// maxState bounds DW_CFA_remember_state nesting; real code uses 1 or 2.
const maxState = 8

// cie is a parsed common information entry.
type cie struct {
	codeAlign  uint64
	dataAlign  int64
	raReg      uint64
	fdeEnc     uint8
	lsdaEnc    uint8
	hasAug     bool // 'z': FDEs carry an augmentation data length
	signal     bool
	insns      []byte // initial instructions
	addrSize64 bool
}

// Table is the call-frame information of one ELF file.
type Table struct {
	data  []byte // .eh_frame contents
	vaddr uint64 // .eh_frame's address in the file's address space
	// hdr is .eh_frame_hdr's binary-search table when its entries are the
	// usual datarel sdata4 pairs: searched in place.
	hdr      []byte
	hdrVaddr uint64
	// index is a sorted FDE index built from .eh_frame when no usable
	// .eh_frame_hdr exists.
	index []indexEntry
	cies  map[uint32]*cie
	// cache holds recently computed rows, direct-mapped by pc: samples
	// return to the same call sites over and over.
	cache *[rowCache]cachedRow
}

// rowCache is the number of cached rows per table (a power of two).
const rowCache = 512

type cachedRow struct {
	pc   uint64 // 0: empty
	ok   bool
	rule Rule
}

type indexEntry struct {
	start, end uint64
	fde        uint32 // offset of the FDE in data
}

// ErrNoCFI is NewTable's error for an empty .eh_frame.
var ErrNoCFI = errors.New("no .eh_frame")

// NewTable parses .eh_frame (its bytes and section address) and, when hdr
// is not empty, .eh_frame_hdr. Every CIE is parsed up front; FDEs are
// parsed per lookup. Malformed input is an error, never a panic.
func NewTable(ehFrame []byte, ehFrameAddr uint64, hdr []byte, hdrAddr uint64) (*Table, error) {
	if len(ehFrame) == 0 {
		return nil, ErrNoCFI
	}
	t := &Table{data: ehFrame, vaddr: ehFrameAddr, cies: make(map[uint32]*cie)}
	if len(hdr) > 0 && t.useHdr(hdr, hdrAddr) {
		if err := t.scan(false); err != nil {
			return nil, err
		}
		return t, nil
	}
	if err := t.scan(true); err != nil {
		return nil, err
	}
	return t, nil
}

// useHdr takes .eh_frame_hdr's table if it has the layout searched in
// place (version 1, datarel|sdata4 pairs).
func (t *Table) useHdr(hdr []byte, addr uint64) bool {
	if len(hdr) < 4 || hdr[0] != 1 {
		return false
	}
	ptrEnc, cntEnc, tabEnc := hdr[1], hdr[2], hdr[3]
	r := reader{b: hdr, pos: 4, vaddr: addr}
	if _, ok := r.encoded(ptrEnc, 0); !ok {
		return false
	}
	if cntEnc == peOmit || tabEnc != peDatarel|peSdata4 {
		return false
	}
	n, ok := r.encoded(cntEnc, 0)
	if !ok || n == 0 || n > uint64(len(hdr)-r.pos)/8 {
		return false
	}
	t.hdr = hdr[r.pos : r.pos+int(n)*8]
	t.hdrVaddr = addr
	return true
}

// scan walks every entry of .eh_frame: it parses the CIEs and, with
// buildIndex, records every FDE's range.
func (t *Table) scan(buildIndex bool) error {
	d := t.data
	for pos := 0; pos+4 <= len(d); {
		start := pos
		length := uint64(binary.LittleEndian.Uint32(d[pos:]))
		pos += 4
		if length == 0 {
			break // terminator
		}
		if length == 0xffffffff {
			if pos+8 > len(d) {
				return fmt.Errorf(".eh_frame: truncated 64-bit length at %#x", start)
			}
			length = binary.LittleEndian.Uint64(d[pos:])
			pos += 8
		}
		if length > uint64(len(d)-pos) || length < 4 {
			return fmt.Errorf(".eh_frame: entry at %#x overruns the section", start)
		}
		end := pos + int(length)
		id := binary.LittleEndian.Uint32(d[pos:])
		if id == 0 {
			c, err := t.parseCIE(start, d[pos+4:end])
			if err != nil {
				return err
			}
			t.cies[uint32(start)] = c
		} else if buildIndex {
			// The FDE's CIE may come later in the section: index FDEs
			// after every CIE is known.
			t.index = append(t.index, indexEntry{fde: uint32(start)})
		}
		pos = end
	}
	if !buildIndex {
		return nil
	}
	out := t.index[:0]
	for _, e := range t.index {
		var f fde
		if t.parseFDE(e.fde, &f) && f.end > f.start {
			out = append(out, indexEntry{start: f.start, end: f.end, fde: e.fde})
		}
	}
	t.index = out
	sort.Slice(t.index, func(i, j int) bool { return t.index[i].start < t.index[j].start })
	return nil
}

func (t *Table) parseCIE(off int, b []byte) (*cie, error) {
	r := reader{b: b, vaddr: t.vaddr + uint64(off) + 8}
	bad := func(what string) (*cie, error) {
		return nil, fmt.Errorf(".eh_frame: CIE at %#x: %s", off, what)
	}
	ver, ok := r.u8()
	if !ok || (ver != 1 && ver != 3 && ver != 4) {
		return bad(fmt.Sprintf("version %d", ver))
	}
	aug, ok := r.cstr()
	if !ok {
		return bad("unterminated augmentation")
	}
	c := &cie{fdeEnc: peAbsptr, lsdaEnc: peOmit, addrSize64: true}
	if ver == 4 {
		// address_size, segment_selector_size
		as, ok1 := r.u8()
		_, ok2 := r.u8()
		if !ok1 || !ok2 || (as != 8 && as != 4) {
			return bad("address size")
		}
		c.addrSize64 = as == 8
	}
	if c.codeAlign, ok = r.uleb(); !ok {
		return bad("code alignment")
	}
	if c.dataAlign, ok = r.sleb(); !ok {
		return bad("data alignment")
	}
	if ver == 1 {
		v, ok := r.u8()
		if !ok {
			return bad("return register")
		}
		c.raReg = uint64(v)
	} else if c.raReg, ok = r.uleb(); !ok {
		return bad("return register")
	}
	if c.raReg >= nRegs {
		return bad(fmt.Sprintf("return register %d", c.raReg))
	}
	if len(aug) > 0 && aug[0] == 'z' {
		c.hasAug = true
		n, ok := r.uleb()
		if !ok || n > uint64(len(r.b)-r.pos) {
			return bad("augmentation data")
		}
		end := r.pos + int(n)
		for _, ch := range aug[1:] {
			switch ch {
			case 'R':
				if c.fdeEnc, ok = r.u8(); !ok {
					return bad("R encoding")
				}
			case 'L':
				if c.lsdaEnc, ok = r.u8(); !ok {
					return bad("L encoding")
				}
			case 'P':
				enc, ok := r.u8()
				if !ok {
					return bad("P encoding")
				}
				if _, ok := r.encoded(enc&^peIndir, 0); !ok {
					return bad("personality")
				}
			case 'S':
				c.signal = true
			case 'B', 'G':
				// AArch64 / memory-tagging flags: no data.
			default:
				return bad(fmt.Sprintf("augmentation %q", aug))
			}
		}
		r.pos = end
	} else if aug == "eh" {
		r.pos += 8 // GCC 2.x's eh_ptr
	} else if aug != "" {
		return bad(fmt.Sprintf("augmentation %q", aug))
	}
	if r.pos > len(r.b) {
		return bad("truncated")
	}
	c.insns = r.b[r.pos:]
	return c, nil
}

// fde is a parsed frame description entry (a view into Table.data).
type fde struct {
	cie        *cie
	start, end uint64
	insns      []byte
}

// parseFDE reads the FDE at off.
func (t *Table) parseFDE(off uint32, f *fde) bool {
	d := t.data
	pos := int(off)
	if pos+8 > len(d) {
		return false
	}
	length := uint64(binary.LittleEndian.Uint32(d[pos:]))
	pos += 4
	if length == 0xffffffff {
		if pos+8 > len(d) {
			return false
		}
		length = binary.LittleEndian.Uint64(d[pos:])
		pos += 8
	}
	if length < 4 || length > uint64(len(d)-pos) {
		return false
	}
	end := pos + int(length)
	ptr := binary.LittleEndian.Uint32(d[pos:])
	if ptr == 0 || uint64(ptr) > uint64(pos) {
		return false // a CIE, or a pointer before the section
	}
	c := t.cies[uint32(pos)-ptr]
	if c == nil {
		return false
	}
	r := reader{b: d[:end], pos: pos + 4, vaddr: t.vaddr}
	start, ok := r.encoded(c.fdeEnc, 0)
	if !ok {
		return false
	}
	size, ok := r.encoded(c.fdeEnc&0x0f, 0)
	if !ok {
		return false
	}
	if c.hasAug {
		n, ok := r.uleb()
		if !ok || n > uint64(end-r.pos) {
			return false
		}
		r.pos += int(n)
	}
	*f = fde{cie: c, start: start, end: start + size, insns: d[r.pos:end]}
	return true
}

// lookupFDE finds the FDE covering pc (file address).
func (t *Table) lookupFDE(pc uint64, f *fde) bool {
	if t.hdr != nil {
		// Entries: int32 initial location, int32 FDE address, both
		// relative to .eh_frame_hdr's start, sorted by location.
		n := len(t.hdr) / 8
		lo, hi := 0, n
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			loc := t.hdrVaddr + uint64(int64(int32(binary.LittleEndian.Uint32(t.hdr[m*8:]))))
			if loc <= pc {
				lo = m + 1
			} else {
				hi = m
			}
		}
		if lo == 0 {
			return false
		}
		fa := t.hdrVaddr + uint64(int64(int32(binary.LittleEndian.Uint32(t.hdr[(lo-1)*8+4:]))))
		if fa < t.vaddr || fa-t.vaddr >= uint64(len(t.data)) {
			return false
		}
		if !t.parseFDE(uint32(fa-t.vaddr), f) {
			return false
		}
		return f.start <= pc && pc < f.end
	}
	ix := t.index
	i := sort.Search(len(ix), func(i int) bool { return ix[i].start > pc }) - 1
	if i < 0 || pc >= ix[i].end {
		return false
	}
	return t.parseFDE(ix[i].fde, f)
}

// Find computes the unwind row for pc (an address in the file's own
// address space). It reports false when no FDE covers pc or its program
// cannot be interpreted. It does not allocate after its first call, and
// is not safe for concurrent use (it caches rows).
func (t *Table) Find(pc uint64, r *Rule) bool {
	if t == nil {
		return false
	}
	if t.cache == nil {
		t.cache = new([rowCache]cachedRow)
	}
	// pc>>0 mixes poorly for 16-byte-aligned call sites; fold higher bits.
	c := &t.cache[(pc^pc>>9)&(rowCache-1)]
	if c.pc == pc && pc != 0 {
		*r = c.rule
		return c.ok
	}
	ok := t.find(pc, r)
	c.pc, c.ok = pc, ok
	if ok {
		c.rule = *r
	}
	return ok
}

func (t *Table) find(pc uint64, r *Rule) bool {
	var f fde
	if !t.lookupFDE(pc, &f) {
		return false
	}
	c := f.cie
	*r = Rule{Signal: c.signal}
	for i := range r.regs {
		r.regs[i].kind = ruleSame
	}
	r.regs[RegRA].kind = ruleUndefined
	var init Rule
	if !run(c, c.insns, f.start, ^uint64(0), r, nil) {
		return false
	}
	init = *r
	return run(c, f.insns, f.start, pc, r, &init)
}

// run interprets CFA instructions from loc until the row that covers pc.
// init is the row after the CIE's initial instructions (for
// DW_CFA_restore); nil while running them.
func run(c *cie, insns []byte, loc, pc uint64, r *Rule, init *Rule) bool {
	var stack [maxState]Rule
	depth := 0
	rd := reader{b: insns}
	for rd.pos < len(rd.b) {
		op, _ := rd.u8()
		var ok bool
		switch op & 0xc0 {
		case 0x40: // DW_CFA_advance_loc
			loc += uint64(op&0x3f) * c.codeAlign
			if loc > pc {
				return true
			}
			continue
		case 0x80: // DW_CFA_offset
			n, ok := rd.uleb()
			if !ok {
				return false
			}
			setReg(r, uint64(op&0x3f), regRule{kind: ruleOffset, off: int64(n) * c.dataAlign})
			continue
		case 0xc0: // DW_CFA_restore
			if init == nil {
				return false
			}
			restore(r, init, uint64(op&0x3f))
			continue
		}
		switch op {
		case 0x00: // DW_CFA_nop
		case 0x01: // DW_CFA_set_loc
			if c.fdeEnc&0x70 != 0 {
				return false // relative to what the reader does not know here
			}
			var v uint64
			if v, ok = rd.encoded(c.fdeEnc, 0); !ok {
				return false
			}
			loc = v
			if loc > pc {
				return true
			}
		case 0x02, 0x03, 0x04: // DW_CFA_advance_loc1/2/4
			var d uint64
			switch op {
			case 0x02:
				var b uint8
				b, ok = rd.u8()
				d = uint64(b)
			case 0x03:
				d, ok = rd.fixed(2)
			default:
				d, ok = rd.fixed(4)
			}
			if !ok {
				return false
			}
			loc += d * c.codeAlign
			if loc > pc {
				return true
			}
		case 0x05: // DW_CFA_offset_extended
			reg, ok1 := rd.uleb()
			n, ok2 := rd.uleb()
			if !ok1 || !ok2 {
				return false
			}
			setReg(r, reg, regRule{kind: ruleOffset, off: int64(n) * c.dataAlign})
		case 0x06: // DW_CFA_restore_extended
			reg, ok := rd.uleb()
			if !ok || init == nil {
				return false
			}
			restore(r, init, reg)
		case 0x07: // DW_CFA_undefined
			reg, ok := rd.uleb()
			if !ok {
				return false
			}
			setReg(r, reg, regRule{kind: ruleUndefined})
		case 0x08: // DW_CFA_same_value
			reg, ok := rd.uleb()
			if !ok {
				return false
			}
			setReg(r, reg, regRule{kind: ruleSame})
		case 0x09: // DW_CFA_register
			reg, ok1 := rd.uleb()
			reg2, ok2 := rd.uleb()
			if !ok1 || !ok2 {
				return false
			}
			if reg2 >= nRegs {
				setReg(r, reg, regRule{kind: ruleUndefined})
			} else {
				setReg(r, reg, regRule{kind: ruleRegister, reg: uint8(reg2)})
			}
		case 0x0a: // DW_CFA_remember_state
			if depth == maxState {
				return false
			}
			stack[depth] = *r
			depth++
		case 0x0b: // DW_CFA_restore_state
			if depth == 0 {
				return false
			}
			depth--
			*r = stack[depth] // the CFA rule is part of the state (DWARF 5 §6.4.2.4)
		case 0x0c: // DW_CFA_def_cfa
			reg, ok1 := rd.uleb()
			off, ok2 := rd.uleb()
			if !ok1 || !ok2 || reg >= nRegs {
				return false
			}
			r.CFAReg, r.CFAOffset = uint8(reg), int64(off)
		case 0x0d: // DW_CFA_def_cfa_register
			reg, ok := rd.uleb()
			if !ok || reg >= nRegs {
				return false
			}
			r.CFAReg = uint8(reg)
		case 0x0e: // DW_CFA_def_cfa_offset
			off, ok := rd.uleb()
			if !ok {
				return false
			}
			r.CFAOffset = int64(off)
		case 0x0f: // DW_CFA_def_cfa_expression
			n, ok := rd.uleb()
			if !ok || n > uint64(len(rd.b)-rd.pos) {
				return false
			}
			expr := rd.b[rd.pos : rd.pos+int(n)]
			rd.pos += int(n)
			if thr, ok := pltExpr(expr); ok {
				r.CFAReg, r.CFAOffset = cfaExprPLT, thr
			} else {
				r.CFAReg = cfaExpr
			}
		case 0x10: // DW_CFA_expression
			reg, ok1 := rd.uleb()
			n, ok2 := rd.uleb()
			if !ok1 || !ok2 || n > uint64(len(rd.b)-rd.pos) {
				return false
			}
			rd.pos += int(n)
			setReg(r, reg, regRule{kind: ruleExpr})
		case 0x11: // DW_CFA_offset_extended_sf
			reg, ok1 := rd.uleb()
			n, ok2 := rd.sleb()
			if !ok1 || !ok2 {
				return false
			}
			setReg(r, reg, regRule{kind: ruleOffset, off: n * c.dataAlign})
		case 0x12: // DW_CFA_def_cfa_sf
			reg, ok1 := rd.uleb()
			n, ok2 := rd.sleb()
			if !ok1 || !ok2 || reg >= nRegs {
				return false
			}
			r.CFAReg, r.CFAOffset = uint8(reg), n*c.dataAlign
		case 0x13: // DW_CFA_def_cfa_offset_sf
			n, ok := rd.sleb()
			if !ok {
				return false
			}
			r.CFAOffset = n * c.dataAlign
		case 0x14: // DW_CFA_val_offset
			reg, ok1 := rd.uleb()
			n, ok2 := rd.uleb()
			if !ok1 || !ok2 {
				return false
			}
			setReg(r, reg, regRule{kind: ruleValOffset, off: int64(n) * c.dataAlign})
		case 0x15: // DW_CFA_val_offset_sf
			reg, ok1 := rd.uleb()
			n, ok2 := rd.sleb()
			if !ok1 || !ok2 {
				return false
			}
			setReg(r, reg, regRule{kind: ruleValOffset, off: n * c.dataAlign})
		case 0x16: // DW_CFA_val_expression
			reg, ok1 := rd.uleb()
			n, ok2 := rd.uleb()
			if !ok1 || !ok2 || n > uint64(len(rd.b)-rd.pos) {
				return false
			}
			rd.pos += int(n)
			setReg(r, reg, regRule{kind: ruleExpr})
		case 0x2e: // DW_CFA_GNU_args_size
			if _, ok := rd.uleb(); !ok {
				return false
			}
		case 0x2f: // DW_CFA_GNU_negative_offset_extended
			reg, ok1 := rd.uleb()
			n, ok2 := rd.uleb()
			if !ok1 || !ok2 {
				return false
			}
			setReg(r, reg, regRule{kind: ruleOffset, off: -int64(n) * c.dataAlign})
		default:
			return false
		}
	}
	return true
}

// pltExpr recognises the CFA expression of x86-64 PLT entries:
// DW_OP_breg7 (rsp) 8; DW_OP_breg16 (rip) 0; DW_OP_lit15; DW_OP_and;
// DW_OP_lit{10,11}; DW_OP_ge; DW_OP_lit3; DW_OP_shl; DW_OP_plus. That is
// rsp+8, plus 8 when the IP's low 4 bits are at or past the threshold (10
// or 11, where the entry's push has run). It returns the threshold.
func pltExpr(e []byte) (int64, bool) {
	if len(e) == 11 && e[0] == 0x77 && e[1] == 8 && e[2] == 0x80 && e[3] == 0 &&
		e[4] == 0x3f && e[5] == 0x1a && (e[6] == 0x3a || e[6] == 0x3b) && e[7] == 0x2a &&
		e[8] == 0x33 && e[9] == 0x24 && e[10] == 0x22 {
		return int64(e[6] - 0x30), true
	}
	return 0, false
}

func setReg(r *Rule, reg uint64, rr regRule) {
	if reg < nRegs {
		r.regs[reg] = rr
	}
}

func restore(r, init *Rule, reg uint64) {
	if reg < nRegs {
		r.regs[reg] = init.regs[reg]
	}
}

// reader decodes DWARF data from b.
type reader struct {
	b     []byte
	pos   int
	vaddr uint64 // address of b[0], for pc-relative pointers
}

func (r *reader) u8() (uint8, bool) {
	if r.pos >= len(r.b) {
		return 0, false
	}
	v := r.b[r.pos]
	r.pos++
	return v, true
}

func (r *reader) fixed(n int) (uint64, bool) {
	if n > len(r.b)-r.pos {
		return 0, false
	}
	var v uint64
	switch n {
	case 2:
		v = uint64(binary.LittleEndian.Uint16(r.b[r.pos:]))
	case 4:
		v = uint64(binary.LittleEndian.Uint32(r.b[r.pos:]))
	case 8:
		v = binary.LittleEndian.Uint64(r.b[r.pos:])
	}
	r.pos += n
	return v, true
}

func (r *reader) uleb() (uint64, bool) {
	var v uint64
	var shift uint
	for r.pos < len(r.b) {
		c := r.b[r.pos]
		r.pos++
		if shift < 64 {
			v |= uint64(c&0x7f) << shift
		}
		shift += 7
		if c&0x80 == 0 {
			return v, true
		}
	}
	return 0, false
}

func (r *reader) sleb() (int64, bool) {
	var v int64
	var shift uint
	for r.pos < len(r.b) {
		c := r.b[r.pos]
		r.pos++
		if shift < 64 {
			v |= int64(c&0x7f) << shift
		}
		shift += 7
		if c&0x80 == 0 {
			if shift < 64 && c&0x40 != 0 {
				v |= -1 << shift
			}
			return v, true
		}
	}
	return 0, false
}

func (r *reader) cstr() (string, bool) {
	for i := r.pos; i < len(r.b); i++ {
		if r.b[i] == 0 {
			s := string(r.b[r.pos:i])
			r.pos = i + 1
			return s, true
		}
	}
	return "", false
}

// encoded reads a pointer in encoding enc. pcrel is relative to the
// field's own address (r.vaddr + position); datarel to dataBase.
func (r *reader) encoded(enc uint8, dataBase uint64) (uint64, bool) {
	if enc == peOmit {
		return 0, true
	}
	at := r.vaddr + uint64(r.pos)
	var v uint64
	var ok bool
	switch enc & 0x0f {
	case peAbsptr, peUdata8:
		v, ok = r.fixed(8)
	case peUleb128:
		v, ok = r.uleb()
	case peUdata2:
		v, ok = r.fixed(2)
	case peUdata4:
		v, ok = r.fixed(4)
	case peSleb128:
		var s int64
		s, ok = r.sleb()
		v = uint64(s)
	case peSdata2:
		v, ok = r.fixed(2)
		v = uint64(int64(int16(v)))
	case peSdata4:
		v, ok = r.fixed(4)
		v = uint64(int64(int32(v)))
	case peSdata8:
		v, ok = r.fixed(8)
	default:
		return 0, false
	}
	if !ok {
		return 0, false
	}
	switch enc & 0x70 {
	case 0:
	case pePcrel:
		v += at
	case peDatarel:
		v += dataBase
	case peTextrel, peFuncrel, peAligned:
		return 0, false
	default:
		return 0, false
	}
	return v, true
}
