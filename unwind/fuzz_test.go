package unwind

import (
	"encoding/binary"
	"testing"
)

// FuzzTable feeds arbitrary .eh_frame and .eh_frame_hdr bytes to the
// parser and looks rows up: errors are fine, panics and endless loops are
// not. The seeds are the first entries of this machine's glibc (a CIE and
// its FDEs, with a header whose table covers them) and the checked-in
// corpus (testdata/fuzz/FuzzTable).
func FuzzTable(f *testing.F) {
	s := loadSections(f, libcPath)
	for _, n := range []int{64, 512, 4096} {
		f.Add(s.eh[:n], s.hdr[:min(len(s.hdr), 12+8*8)], uint64(0x26010))
	}
	f.Add([]byte{}, []byte{}, uint64(0))
	f.Fuzz(func(t *testing.T, eh, hdr []byte, pc uint64) {
		const ehAddr, hdrAddr = 0x1000, 0x800
		tab, err := NewTable(eh, ehAddr, hdr, hdrAddr)
		if err != nil {
			return
		}
		var r Rule
		tab.Find(pc, &r)
		for _, e := range tab.index {
			tab.Find(e.start, &r)
			tab.Find(e.end-1, &r)
		}
		// A walk over the fuzzed CFI on a fuzzed stack ends.
		stack := make([]byte, 256)
		copy(stack, eh)
		regs := Regs{IP: pc, SP: 0x7000, BP: 0x7000 + uint64(binary.LittleEndian.Uint16(append(eh, 0, 0)[:2]))}
		Unwind(&regs, &Stack{Base: 0x7000, Data: stack}, tableSpace{tab}, make([]uint64, 0, 64))
	})
}

type tableSpace struct{ t *Table }

func (s tableSpace) Find(pc uint64) (*Table, uint64, bool) { return s.t, 0, true }
