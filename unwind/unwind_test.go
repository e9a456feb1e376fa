package unwind

import (
	"encoding/binary"
	"slices"
	"testing"
)

// A fake address space: glibc's code (its real CFI) at libcBias, and an
// anonymous "JIT" region without CFI.
const (
	libcBias  = 0x7f0000000000
	jitStart  = 0x50000000
	jitEnd    = 0x50100000
	stackBase = 0x7ffd00000000
)

type fakeSpace struct{ libc *Table }

func (f *fakeSpace) Find(pc uint64) (*Table, uint64, bool) {
	switch {
	case pc >= libcBias && pc < libcBias+0x200000:
		return f.libc, libcBias, true
	case pc >= jitStart && pc < jitEnd:
		return nil, 0, true
	}
	return nil, 0, false
}

// fakeStack is stack memory being laid out for a test.
type fakeStack struct {
	base uint64
	data []byte
}

func newStack(size int) *fakeStack { return &fakeStack{base: stackBase, data: make([]byte, size)} }

func (s *fakeStack) put(addr, v uint64) {
	binary.LittleEndian.PutUint64(s.data[addr-s.base:], v)
}

func libcTable(t testing.TB) *Table {
	t.Helper()
	s := loadSections(t, libcPath)
	tab, err := NewTable(s.eh, s.ehAddr, s.hdr, s.hdrAddr)
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// libcFunc finds a pc in glibc past a function's prologue whose row has
// an RSP-based CFA with RBX and RBP saved in the frame: code built
// without frame pointers that uses RBP for data (like msort_with_tmp).
func libcFunc(t *testing.T, tab *Table) (pc uint64, r Rule) {
	t.Helper()
	s := loadSections(t, libcPath)
	idx, err := NewTable(s.eh, s.ehAddr, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range idx.index {
		for pc := e.start; pc < e.end; pc++ {
			if tab.Find(pc, &r) && r.CFAReg == RegRSP && r.CFAOffset > 16 && r.regs[RegRBX].kind == ruleOffset && r.regs[RegRBP].kind == ruleOffset {
				return pc, r
			}
		}
	}
	t.Fatal("no row with an RSP-based CFA and RBX/RBP saved in glibc")
	return 0, r
}

// TestUnwindThroughLibc: a sample in a glibc function without a frame
// pointer (CFA = RSP+N, RBP and RBX saved in its frame) called from JIT'd code
// (frame pointers), itself called from JIT'd code whose saved RBP is 0
// (the outermost frame). The walk uses glibc's CFI for the first frame,
// restores RBP from where the CFI says the function saved it, then follows
// frame pointers.
func TestUnwindThroughLibc(t *testing.T) {
	tab := libcTable(t)
	pc, r := libcFunc(t, tab)
	st := newStack(4096)
	sp := uint64(stackBase + 64)
	cfa := sp + uint64(r.CFAOffset)
	const ra1, ra2 = jitStart + 0x1234, jitStart + 0x5678
	jitBP := cfa + 64 // the JIT caller's frame record
	st.put(cfa+uint64(r.regs[RegRA].off), ra1)
	st.put(cfa+uint64(r.regs[RegRBP].off), jitBP)
	st.put(cfa+uint64(r.regs[RegRBX].off), 0xdead)
	st.put(jitBP, 0) // saved RBP of the outermost frame
	st.put(jitBP+8, ra2)
	regs := Regs{IP: pc + libcBias, SP: sp, BP: 0x1111 /* data */, BX: 7}
	out, end := Unwind(&regs, &Stack{Base: st.base, Data: st.data}, &fakeSpace{libc: tab}, make([]uint64, 0, 16))
	want := []uint64{pc + libcBias, ra1, ra2}
	if !slices.Equal(out, want) || end != EndOutermost {
		t.Errorf("got %x (%v), want %x (outermost)", out, end, want)
	}
	// Without CFI, RBP holds data and the frame-pointer step fails: the
	// scan for a return address still finds both JIT callers, but not
	// that the last frame is the outermost.
	regs2 := regs
	out, end = Unwind(&regs2, &Stack{Base: st.base, Data: st.data}, &fakeSpace{}, make([]uint64, 0, 16))
	if !slices.Equal(out, want) || end != EndBroken {
		t.Errorf("without CFI: %x (%v), want %x (broken)", out, end, want)
	}
	// A copy that stops inside qsort_r's frame: the walk says so.
	out, end = Unwind(&regs, &Stack{Base: st.base, Data: st.data[:64+8]}, &fakeSpace{libc: tab}, make([]uint64, 0, 16))
	if len(out) != 1 || end != EndStack {
		t.Errorf("short copy: %x (%v)", out, end)
	}
	// Depth limit.
	out, end = Unwind(&regs, &Stack{Base: st.base, Data: st.data}, &fakeSpace{libc: tab}, make([]uint64, 0, 2))
	if len(out) != 2 || end != EndDepth {
		t.Errorf("depth 2: %x (%v)", out, end)
	}
}

// TestUnwindLeafWithoutFrame: a JIT'd leaf sampled at its first
// instruction (return address on top of the stack) and just after "push
// rbp", with RBP holding the caller's data, is walked to its caller.
func TestUnwindLeafWithoutFrame(t *testing.T) {
	for _, pushed := range []bool{false, true} {
		st := newStack(1024)
		sp := uint64(stackBase + 128)
		const caller = jitStart + 0x400
		callerBP := uint64(stackBase + 512)
		top := sp
		if pushed {
			st.put(sp, callerBP) // the pushed RBP
			top = sp + 8
		}
		st.put(top, caller)
		st.put(callerBP, 0)
		st.put(callerBP+8, jitStart+0x800)
		bp := uint64(0x3) // data, not a frame
		if !pushed {
			bp = callerBP // the caller's RBP, untouched yet
		}
		regs := Regs{IP: jitStart + 0x100, SP: sp, BP: bp}
		if !pushed {
			// RBP still valid: the frame-pointer step finds the caller's
			// caller; the leaf rule is for the broken case only.
			regs.BP = 0x3
		}
		out, end := Unwind(&regs, &Stack{Base: st.base, Data: st.data}, &fakeSpace{}, make([]uint64, 0, 8))
		want := []uint64{jitStart + 0x100, caller}
		if pushed {
			want = append(want, jitStart+0x800)
		}
		if len(out) < 2 || !slices.Equal(out[:len(want)], want) {
			t.Errorf("pushed=%v: got %x (%v), want prefix %x", pushed, out, end, want)
		}
	}
}

// TestUnwindRSPFrame: a JIT'd leaf with a frame record, called from a JIT'd
// method with an RSP-based frame (the JIT omitted its frame pointer: an
// [UnmanagedCallersOnly] comparer calling another method), called from a
// glibc function without frame pointers (CFI), called from JIT'd code
// whose frame is the outermost. RBP in the comparer still holds glibc's
// data, so its frame-pointer step fails: the walk finds its return
// address as the first word above its SP pointing into code that has a
// CFI row, skipping its locals and saved registers, and goes on to the
// end.
func TestUnwindRSPFrame(t *testing.T) {
	tab := libcTable(t)
	pc, r := libcFunc(t, tab)
	st := newStack(4096)
	const (
		leafIP = jitStart + 0x100
		raDeep = jitStart + 0x2000 // into the RSP-based comparer
		ra2    = jitStart + 0x3000 // glibc's return into the managed caller
		ra3    = jitStart + 0x4000
	)
	sp := uint64(stackBase + 64)
	leafBP := sp + 16
	st.put(leafBP, 0x7fd36d8a82c4) // the comparer's RBP: glibc's data
	st.put(leafBP+8, raDeep)
	deepSP := leafBP + 16
	st.put(deepSP, 0x659)             // a local
	st.put(deepSP+8, 0x55a20677fd80)  // the reverse P/Invoke frame's Thread*
	st.put(deepSP+16, 0x4000)         // a small integer
	st.put(deepSP+24, 0x7f49018ad888) // saved RBX: heap
	st.put(deepSP+32, pc+libcBias+1)  // the return address into glibc
	libcSP := deepSP + 40
	cfa := libcSP + uint64(r.CFAOffset)
	jitBP := cfa + 64
	st.put(cfa+uint64(r.regs[RegRA].off), ra2)
	st.put(cfa+uint64(r.regs[RegRBP].off), jitBP)
	st.put(jitBP, 0)
	st.put(jitBP+8, ra3)
	regs := Regs{IP: leafIP, SP: sp, BP: leafBP}
	out, end := Unwind(&regs, &Stack{Base: st.base, Data: st.data}, &fakeSpace{libc: tab}, make([]uint64, 0, 16))
	want := []uint64{leafIP, raDeep, pc + libcBias + 1, ra2, ra3}
	if !slices.Equal(out, want) || end != EndOutermost {
		t.Errorf("got %x (%v), want %x (outermost)", out, end, want)
	}
	// The comparer as the leaf: the same walk from its own registers.
	regs = Regs{IP: raDeep - 5, SP: deepSP, BP: 0x7fd36d8a82c4}
	out, end = Unwind(&regs, &Stack{Base: st.base, Data: st.data}, &fakeSpace{libc: tab}, make([]uint64, 0, 16))
	if !slices.Equal(out, append([]uint64{raDeep - 5}, want[2:]...)) || end != EndOutermost {
		t.Errorf("comparer as leaf: got %x (%v)", out, end)
	}
}

// TestUnwindOSR: an OSR method's frame record holds its Tier0 method's
// caller's RBP and a pseudo return address into the Tier0 code; the Tier0
// frame's own record sits between, below the caller's frame, above a
// stale record left by an earlier call. The walk reports OSR code, Tier0
// code, the caller, and not the stale record.
func TestUnwindOSR(t *testing.T) {
	st := newStack(2048)
	const (
		osrIP   = jitStart + 0x2000
		pseudo  = jitStart + 0x1010 // in the Tier0 method
		toCall  = jitStart + 0x3333 // Tier0's return address into the caller
		stale   = jitStart + 0x4444
		callerR = jitStart + 0x5555
	)
	sp := uint64(stackBase + 64)
	osrBP := sp + 32
	callerBP := uint64(stackBase + 1024)
	tier0BP := callerBP - 128
	st.put(osrBP, callerBP) // the OSR record links past the Tier0 frame
	st.put(osrBP+8, pseudo)
	st.put(tier0BP-64, callerBP) // a stale record of an earlier call
	st.put(tier0BP-56, stale)
	st.put(tier0BP, callerBP) // the Tier0 frame's record
	st.put(tier0BP+8, toCall)
	st.put(callerBP, 0)
	st.put(callerBP+8, callerR)
	regs := Regs{IP: osrIP, SP: sp, BP: osrBP}
	out, end := Unwind(&regs, &Stack{Base: st.base, Data: st.data}, &fakeSpace{}, make([]uint64, 0, 8))
	want := []uint64{osrIP, pseudo, toCall, callerR}
	if !slices.Equal(out, want) || end != EndOutermost {
		t.Errorf("got %x (%v), want %x", out, end, want)
	}
}

// TestSplice: a walk that stopped continues with the kernel's chain past
// the deepest address both share; a garbage last address is dropped;
// recursion picks the occurrence at the closest depth.
func TestSplice(t *testing.T) {
	for _, c := range []struct {
		name       string
		out, chain []uint64
		want       []uint64
		ok         bool
	}{
		{"continues", []uint64{1, 2, 3}, []uint64{1, 3, 4, 5}, []uint64{1, 2, 3, 4, 5}, true},
		{"garbage dropped", []uint64{1, 2, 3, 99}, []uint64{1, 2, 3, 4}, []uint64{1, 2, 3, 4}, true},
		{"nothing shared", []uint64{1, 2}, []uint64{1, 7, 8}, []uint64{1, 2}, false},
		{"nothing past", []uint64{1, 2, 3}, []uint64{1, 2, 3}, []uint64{1, 2, 3}, false},
		{"recursion", []uint64{1, 5, 5, 5}, []uint64{1, 5, 5, 5, 5, 6}, []uint64{1, 5, 5, 5, 5, 6}, true},
		{"leaf only", []uint64{1}, []uint64{1, 2}, []uint64{1}, false},
	} {
		out := append(make([]uint64, 0, 8), c.out...)
		got, ok := Splice(out, c.chain)
		if ok != c.ok || !slices.Equal(got, c.want) {
			t.Errorf("%s: got %v %v, want %v %v", c.name, got, ok, c.want, c.ok)
		}
	}
	// Capacity bounds the result.
	got, _ := Splice(append(make([]uint64, 0, 3), 1, 2), []uint64{1, 2, 3, 4, 5})
	if !slices.Equal(got, []uint64{1, 2, 3}) {
		t.Errorf("capped: %v", got)
	}
}

// TestUnwindAllocations: a walk through glibc's CFI allocates nothing.
func TestUnwindAllocations(t *testing.T) {
	tab := libcTable(t)
	pc, r := libcFunc(t, tab)
	st := newStack(4096)
	sp := uint64(stackBase + 64)
	cfa := sp + uint64(r.CFAOffset)
	st.put(cfa+uint64(r.regs[RegRA].off), jitStart+0x10)
	st.put(cfa+uint64(r.regs[RegRBP].off), 0)
	regs := Regs{IP: pc + libcBias, SP: sp}
	space := &fakeSpace{libc: tab}
	stack := &Stack{Base: st.base, Data: st.data}
	buf := make([]uint64, 0, 32)
	n := testing.AllocsPerRun(100, func() {
		Unwind(&regs, stack, space, buf[:0])
	})
	if n != 0 {
		t.Errorf("%v allocations per walk", n)
	}
}

// BenchmarkUnwindLibc measures one CFI step through glibc plus two
// frame-pointer steps.
func BenchmarkUnwindLibc(b *testing.B) {
	tab := libcTable(b)
	var pc uint64
	var r Rule
	s := loadSections(b, libcPath)
	idx, _ := NewTable(s.eh, s.ehAddr, nil, 0)
	for _, e := range idx.index {
		for p := e.start; p < e.end && pc == 0; p++ {
			if tab.Find(p, &r) && r.CFAReg == RegRSP && r.CFAOffset > 16 && r.regs[RegRBP].kind == ruleOffset {
				pc = p
			}
		}
		if pc != 0 {
			break
		}
	}
	st := newStack(4096)
	sp := uint64(stackBase + 64)
	cfa := sp + uint64(r.CFAOffset)
	bp := cfa + 64
	st.put(cfa+uint64(r.regs[RegRA].off), jitStart+0x10)
	st.put(cfa+uint64(r.regs[RegRBP].off), bp)
	st.put(bp, bp+64)
	st.put(bp+8, jitStart+0x20)
	st.put(bp+64, 0)
	st.put(bp+72, jitStart+0x30)
	regs := Regs{IP: pc + libcBias, SP: sp, BP: 0x1111}
	space := &fakeSpace{libc: tab}
	stack := &Stack{Base: st.base, Data: st.data}
	buf := make([]uint64, 0, 32)
	if out, _ := Unwind(&regs, stack, space, buf[:0]); len(out) != 4 {
		b.Fatalf("walk %x", out)
	}
	b.ReportAllocs()
	for b.Loop() {
		Unwind(&regs, stack, space, buf[:0])
	}
}
