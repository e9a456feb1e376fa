package cdac

import (
	"encoding/binary"
	"fmt"
	"os"
	"strings"
	"testing"
)

// fakeMem is a sparse address space: regions at their base addresses.
type fakeMem map[uint64][]byte

func (f fakeMem) ReadAt(b []byte, addr int64) (int, error) {
	for base, r := range f {
		if uint64(addr) >= base && uint64(addr)+uint64(len(b)) <= base+uint64(len(r)) {
			return copy(b, r[uint64(addr)-base:]), nil
		}
	}
	return 0, fmt.Errorf("%d bytes at %#x not mapped", len(b), addr)
}

func u64(v ...uint64) []byte {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], x)
	}
	return b
}

// header is a 64-bit contract descriptor: magic, flags, the JSON's size
// and address, the pointer data's count and address.
func header(flags, size uint32, js uint64, count uint32, pd uint64) []byte {
	h := make([]byte, 40)
	binary.LittleEndian.PutUint64(h, Magic)
	binary.LittleEndian.PutUint32(h[8:], flags)
	binary.LittleEndian.PutUint32(h[12:], size)
	binary.LittleEndian.PutUint64(h[16:], js)
	binary.LittleEndian.PutUint32(h[24:], count)
	binary.LittleEndian.PutUint64(h[32:], pd)
	return h
}

// TestReadDescriptorSynthetic: a descriptor blob in memory, every form of
// value the compact JSON has (offsets with and without a type, a size,
// direct numbers and hex strings, indirect [N] with and without a type,
// string globals), the NUL after the JSON dropped.
func TestReadDescriptorSynthetic(t *testing.T) {
	js := `{"version":0,"baseline":"empty","types":{"Thread":{"!":600,"Id":16,"LinkNext":[112,"pointer"]}},` +
		`"globals":{"Direct":7,"Hex":["0x1f","uint8"],"Ind":[[1],"pointer"],"Bare":[0],"Arch":["x64","string"],"Neg":"-1"},` +
		`"contracts":{"Thread":1}}` + "\x00"
	m := fakeMem{
		0x1000: header(1, uint32(len(js)), 0x2000, 2, 0x3000),
		0x2000: []byte(js),
		0x3000: u64(0xaaaa, 0x7f00deadbeef),
	}
	d, err := ReadDescriptor(m, 0x1000)
	if err != nil {
		t.Fatal(err)
	}
	if d.PtrSize != 8 || d.Types["Thread"].Size != 600 || d.Contracts["Thread"] != 1 {
		t.Errorf("descriptor %+v", d)
	}
	if o, ok := d.Field("Thread", "LinkNext"); !ok || o != 112 {
		t.Errorf("Thread.LinkNext = %d %v", o, ok)
	}
	if o, ok := d.Field("Thread", "Id"); !ok || o != 16 {
		t.Errorf("Thread.Id = %d %v", o, ok)
	}
	want := map[string]uint64{"Direct": 7, "Hex": 0x1f, "Ind": 0x7f00deadbeef, "Bare": 0xaaaa, "Neg": ^uint64(0)}
	for k, v := range want {
		if d.Globals[k] != v {
			t.Errorf("global %s = %#x, want %#x", k, d.Globals[k], v)
		}
	}
	if d.Strings["Arch"] != "x64" {
		t.Errorf("Arch = %q", d.Strings["Arch"])
	}
	if _, err := d.MustField("Thread", "Nope"); err == nil || !strings.Contains(err.Error(), "Thread.Nope") {
		t.Errorf("missing field: %v", err)
	}
}

// TestReadDescriptorBad: each malformed descriptor is one clear error.
func TestReadDescriptorBad(t *testing.T) {
	js := `{"types":{},"globals":{"X":[[5],"pointer"]}}`
	cases := map[string]struct {
		m    fakeMem
		want string
	}{
		"unmapped":  {fakeMem{}, "not mapped"},
		"magic":     {fakeMem{0x1000: make([]byte, 40)}, "bad magic"},
		"size":      {fakeMem{0x1000: header(1, 0, 0x2000, 0, 0)}, "size 0 out of range"},
		"json gone": {fakeMem{0x1000: header(1, 10, 0x2000, 0, 0)}, "JSON"},
		"count":     {fakeMem{0x1000: header(1, 2, 0x2000, 1<<20, 0), 0x2000: []byte("{}")}, "pointer data entries"},
		"index":     {fakeMem{0x1000: header(1, uint32(len(js)), 0x2000, 1, 0x3000), 0x2000: []byte(js), 0x3000: u64(1)}, "indirect index [5]"},
		"not json":  {fakeMem{0x1000: header(1, 3, 0x2000, 0, 0), 0x2000: []byte("abc")}, "JSON"},
		"baseline":  {fakeMem{0x1000: header(1, 20, 0x2000, 0, 0), 0x2000: []byte(`{"baseline":"net9" }`)}, "baseline"},
	}
	for name, c := range cases {
		_, err := ReadDescriptor(c.m, 0x1000)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", name, err, c.want)
		}
	}
}

// TestParseRealDescriptor: the JSON of .NET 10.0.12's libcoreclr (dumped
// from a live process) has what Process reads, at the offsets that build
// has: the thread list, the sync table entry, the SyncBlock's InteropInfo
// after a 56-byte AwareLock, the MethodTable's flags and module, and the
// indirect globals resolved through the pointer data.
func TestParseRealDescriptor(t *testing.T) {
	js, err := os.ReadFile("testdata/net10.0.12.json")
	if err != nil {
		t.Fatal(err)
	}
	pd := make([]uint64, 24)
	for i := range pd {
		pd[i] = 0x7f0000000000 + uint64(i)*8
	}
	d, err := ParseJSON(js, pd)
	if err != nil {
		t.Fatal(err)
	}
	fields := map[string]int{"Thread.Id": 16, "Thread.OSId": 296, "Thread.LinkNext": 112, "ThreadStore.FirstThreadLink": 88,
		"SyncTableEntry.SyncBlock": 0, "SyncBlock.InteropInfo": 56, "MethodTable.MTFlags2": 8, "MethodTable.Module": 24,
		"Module.Path": 200, "IdDispenser.IdToThread": 88}
	for k, v := range fields {
		typ, f, _ := strings.Cut(k, ".")
		if o, ok := d.Field(typ, f); !ok || o != v {
			t.Errorf("%s = %d %v, want %d", k, o, ok, v)
		}
	}
	if d.Types["SyncTableEntry"].Size != 16 || d.Types["MethodTable"].Size != 64 {
		t.Errorf("sizes: SyncTableEntry %d MethodTable %d", d.Types["SyncTableEntry"].Size, d.Types["MethodTable"].Size)
	}
	globals := map[string]uint64{"ObjectToMethodTableUnmask": 7, "SyncBlockValueToObjectOffset": 4, "ObjectHeaderSize": 8,
		"ThreadStore": pd[3], "SyncTableEntries": pd[13], "ThinlockThreadIdDispenser": pd[18]}
	for k, v := range globals {
		if d.Globals[k] != v {
			t.Errorf("global %s = %#x, want %#x", k, d.Globals[k], v)
		}
	}
	if d.Strings["Architecture"] != "x64" || d.Contracts["Thread"] != 1 {
		t.Errorf("Architecture %q, Thread contract %d", d.Strings["Architecture"], d.Contracts["Thread"])
	}
	p := New(nil, d, "")
	if _, err := p.awareLayout(); err != nil {
		t.Errorf("10.0.12's SyncBlock layout refused: %v", err)
	}
	d.Types["SyncBlock"].Fields["InteropInfo"] = 44
	if _, err := p.awareLayout(); err == nil || !strings.Contains(err.Error(), "InteropInfo at 44") {
		t.Errorf("a SyncBlock of another layout: %v", err)
	}
}
