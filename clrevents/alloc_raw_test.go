package clrevents

import (
	"bytes"
	"errors"
	"testing"
)

// TestAllocationRaw: the raw decoders give the same fields with TypeName
// empty and the name's UTF-16 bytes (NUL included) as a slice of the
// payload; a name without its NUL is a short payload.
func TestAllocationRaw(t *testing.T) {
	tick := le{}.u32(100000).u32(0).u16(0).u64(102400).u64(0xabc).wstr("Foo").u32(1).u64(0x7000).u64(24)
	a, name, err := DecodeAllocationTickRaw(tick, 4, 8)
	want, _ := DecodeAllocationTick(tick, 4, 8)
	want.TypeName = ""
	if err != nil || a != want || !bytes.Equal(name, le{}.wstr("Foo")) || &name[0] != &tick[26] {
		t.Errorf("tick: %v %+v name % x", err, a, name)
	}
	if a, name, err := DecodeAllocationTickRaw(tick[:8], 0, 8); err != nil || name != nil || a.AllocationAmount != 100000 {
		t.Errorf("v0 tick: %v %+v %q", err, a, name)
	}
	s := le{}.u32(1).u16(7).u64(0x1234).wstr("Bar").u64(0xabc0).u64(90000).u64(512)
	b, name, err := DecodeAllocationSampledRaw(s, 0, 8)
	if err != nil || b != (AllocationSampled{AllocationKind: AllocLarge, TypeID: 0x1234, Address: 0xabc0, ObjectSize: 90000, SampledByteOffset: 512}) ||
		!bytes.Equal(name, le{}.wstr("Bar")) {
		t.Errorf("sampled: %v %+v name % x", err, b, name)
	}
	if _, _, err := DecodeAllocationSampledRaw(s[:17], 0, 8); !errors.Is(err, ErrShort) {
		t.Errorf("name without NUL: %v", err)
	}
}
