package stacks

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"testing"
	"unicode/utf16"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/nettrace"
)

// Synthetic events: unit tests of the symbol table and the weights; real
// traces are covered in stacks_test.go.

func utf16z(s string) []byte {
	var b []byte
	for _, u := range utf16.Encode([]rune(s)) {
		b = binary.LittleEndian.AppendUint16(b, u)
	}
	return append(b, 0, 0)
}

func methodPayload(id, start uint64, size uint32, flags uint32, ns, name, sig string) []byte {
	var b []byte
	b = binary.LittleEndian.AppendUint64(b, id)
	b = binary.LittleEndian.AppendUint64(b, 0x1000) // module
	b = binary.LittleEndian.AppendUint64(b, start)
	b = binary.LittleEndian.AppendUint32(b, size)
	b = binary.LittleEndian.AppendUint32(b, 0x06000001)
	b = binary.LittleEndian.AppendUint32(b, flags)
	b = append(b, utf16z(ns)...)
	b = append(b, utf16z(name)...)
	b = append(b, utf16z(sig)...)
	return binary.LittleEndian.AppendUint16(b, 1)
}

var (
	metaLoad    = &nettrace.Metadata{Runtime: nettrace.Runtime, EventID: clrevents.IDMethodLoadVerbose, Version: 1}
	metaUnload  = &nettrace.Metadata{Runtime: nettrace.Runtime, EventID: clrevents.IDMethodUnloadVerbose, Version: 1}
	metaDCEnd   = &nettrace.Metadata{Runtime: nettrace.Rundown, EventID: clrevents.IDRundownMethodDCEndVerbose, Version: 1}
	metaSample  = &nettrace.Metadata{Runtime: nettrace.SampleProfiler, EventID: clrevents.IDThreadSample}
	testHeader  = &nettrace.Header{QPCFrequency: 1_000_000_000, ExpectedCPUSamplingRate: 1_000_000, PointerSize: 8}
	managedType = []byte{2, 0, 0, 0}
)

func sampleEv(ts int64, tid uint64, typ []byte, ips ...uint64) *nettrace.Event {
	return &nettrace.Event{Meta: metaSample, Timestamp: ts, ThreadID: tid, Payload: typ, Stack: ips}
}

func names(p *Profile, s *Sample) []string {
	var out []string
	for _, f := range s.Stack {
		out = append(out, p.Frames[f].Name)
	}
	return out
}

func TestReturnAddressAndUnknown(t *testing.T) {
	b := New(testHeader, Options{})
	// Caller ends exactly where the call returns: its return address is
	// the first byte after it, so only ip-1 stays inside.
	b.Event(&nettrace.Event{Meta: metaDCEnd, Payload: methodPayload(1, 0x1000, 0x100, 0, "N.Caller", "Run", "void  (int32)")})
	b.Event(&nettrace.Event{Meta: metaDCEnd, Payload: methodPayload(2, 0x1100, 0x80, 0, "N.Leaf", "Spin", "int32  ()")})
	b.Event(sampleEv(1_000_000, 7, managedType, 0x1100, 0x1100, 0x9999))
	p := b.Result()
	if len(p.Samples) != 1 {
		t.Fatalf("%d samples", len(p.Samples))
	}
	got := names(p, &p.Samples[0])
	want := []string{"N.Leaf.Spin()", "N.Caller.Run(int32)", UnknownFrame}
	if len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("stack %q, want %q", got, want)
	}
	if p.Unresolved != 1 || p.Samples[0].Nanos != 1_000_000 {
		t.Errorf("unresolved %d nanos %d", p.Unresolved, p.Samples[0].Nanos)
	}
}

func TestTruncatedAndNative(t *testing.T) {
	b := New(testHeader, Options{})
	b.Event(&nettrace.Event{Meta: metaDCEnd, Payload: methodPayload(1, 0x1000, 0x100, 0, "N.R", "Recurse", "int32  (int32)")})
	deep := make([]uint64, MaxStackDepth)
	for i := range deep {
		deep[i] = 0x1010
	}
	b.Event(sampleEv(1_000_000, 7, managedType, deep...))
	b.Event(sampleEv(2_000_000, 7, []byte{1, 0, 0, 0}, 0x1010))
	b.Event(sampleEv(3_000_000, 7, []byte{0, 0, 0, 0}, 0x1010)) // Error: ignored
	p := b.Result()
	if p.Total != 3 || p.Errors != 1 || p.Truncated != 1 || len(p.Samples) != 2 {
		t.Fatalf("total %d errors %d truncated %d samples %d", p.Total, p.Errors, p.Truncated, len(p.Samples))
	}
	for i := range p.Samples {
		s := &p.Samples[i]
		n := names(p, s)
		switch s.Type {
		case clrevents.SampleManaged:
			if len(n) != MaxStackDepth+1 || n[len(n)-1] != TruncatedFrame {
				t.Errorf("deep stack: %d frames, root %q", len(n), n[len(n)-1])
			}
		case clrevents.SampleExternal:
			if len(n) != 2 || n[0] != NativeFrame || n[1] != "N.R.Recurse(int32)" {
				t.Errorf("external stack %q", n)
			}
		}
	}
}

// TestCodeReuse: a collectible method unloaded and its memory reused by
// another resolves by the sample's time.
func TestCodeReuse(t *testing.T) {
	b := New(testHeader, Options{})
	b.Event(&nettrace.Event{Meta: metaLoad, Timestamp: 100, Payload: methodPayload(1, 0x5000, 0x100, 0, "Old", "M", "void  ()")})
	b.Event(sampleEv(1_000_000, 7, managedType, 0x5010))
	b.Event(&nettrace.Event{Meta: metaUnload, Timestamp: 1_500_000, Payload: methodPayload(1, 0x5000, 0x100, 0, "Old", "M", "void  ()")})
	b.Event(&nettrace.Event{Meta: metaLoad, Timestamp: 1_600_000, Payload: methodPayload(2, 0x5000, 0x80, 0, "New", "M", "void  ()")})
	b.Event(sampleEv(2_000_000, 7, managedType, 0x5010))
	p := b.Result()
	got := map[string]int64{}
	for i := range p.Samples {
		got[names(p, &p.Samples[i])[0]] += p.Samples[i].Count
	}
	if got["Old.M()"] != 1 || got["New.M()"] != 1 {
		t.Errorf("resolved %v", got)
	}
}

// TestTiers: a method re-jitted at tier 1 has two bodies; samples in each
// resolve to the same name, and merge into one stack.
func TestTiers(t *testing.T) {
	b := New(testHeader, Options{})
	b.Event(&nettrace.Event{Meta: metaLoad, Timestamp: 10, Payload: methodPayload(1, 0x1000, 0x100, 3<<7, "A", "Hot", "void  ()")})
	b.Event(sampleEv(1_000_000, 7, managedType, 0x1010))
	b.Event(&nettrace.Event{Meta: metaLoad, Timestamp: 1_100_000, Payload: methodPayload(1, 0x8000, 0x100, 4<<7, "A", "Hot", "void  ()")})
	b.Event(sampleEv(2_000_000, 7, managedType, 0x8010))
	// The rundown repeats the tier-1 body: no duplicate entry.
	b.Event(&nettrace.Event{Meta: metaDCEnd, Timestamp: 5_000_000, Payload: methodPayload(1, 0x8000, 0x100, 4<<7, "A", "Hot", "void  ()")})
	p := b.Result()
	if p.Methods != 2 {
		t.Errorf("%d method bodies, want 2", p.Methods)
	}
	tiers := map[clrevents.OptimizationTier]bool{}
	for _, f := range p.Frames {
		tiers[f.Tier] = true
	}
	if !tiers[clrevents.TierQuickJitted] || !tiers[clrevents.TierOptimizedTier1] {
		t.Errorf("tiers %v", tiers)
	}
}

// TestTicks: a thread absent from a tick is credited one tick interval,
// not the whole gap; consecutive samples get the true interval.
func TestTicks(t *testing.T) {
	b := New(testHeader, Options{})
	b.Event(&nettrace.Event{Meta: metaDCEnd, Payload: methodPayload(1, 0x1000, 0x100, 0, "A", "M", "void  ()")})
	const ms = 1_000_000
	// Thread 1 every tick (ticks 2 ms apart); thread 2 at the first and
	// the last tick only.
	for i := int64(0); i < 5; i++ {
		b.Event(sampleEv(i*2*ms, 1, managedType, 0x1010))
		if i == 0 || i == 4 {
			b.Event(sampleEv(i*2*ms+1000, 2, managedType, 0x1010))
		}
	}
	p := b.Result()
	per := map[uint64]int64{}
	for i := range p.Samples {
		per[p.Threads[p.Samples[i].Thread].ID] += p.Samples[i].Nanos
	}
	// Thread 1: first sample one period (1 ms), then 4 × 2 ms.
	// Thread 2: one period, then one tick (2 ms), not 8 ms.
	if per[1] != 9*ms || per[2] != 3*ms {
		t.Errorf("thread time %v", per)
	}
}

func TestSymtabLookupEmpty(t *testing.T) {
	s := newSymtab()
	s.freeze()
	if s.lookup(0x1234, 0) != nil {
		t.Error("empty table resolved")
	}
	var m clrevents.Method
	s.add(&m, 0) // size 0: ignored
	s.remove(&clrevents.Method{StartAddress: 1, Size: 1}, math.MaxInt64)
	s.freeze()
	if len(s.methods) != 1 {
		t.Errorf("%d entries", len(s.methods))
	}
}

func TestMappings(t *testing.T) {
	maps := ParseProcMaps(`55d0c0000000-55d0c0010000 r-xp 00000000 08:01 123 /usr/share/dotnet/dotnet
7f0000000000-7f0000100000 r-xp 00002000 08:01 456 /usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.0/libcoreclr.so
7f1000000000-7f1000800000 r-xp 00001000 08:01 789 /usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.0/System.Private.CoreLib.dll
7f2000000000-7f2000001000 rw-p 00000000 00:00 0 [heap]
garbage line
`)
	if len(maps) != 3 || maps[1].Offset != 0x2000 || maps[2].Path[len(maps[2].Path)-4:] != ".dll" {
		t.Fatalf("parsed %+v", maps)
	}
	b := New(testHeader, Options{})
	b.SetMappings(maps)
	b.Event(&nettrace.Event{Meta: metaDCEnd, Payload: methodPayload(1, 0x1000, 0x100, 0, "N.C", "Run", "void  ()")})
	// leaf in CoreLib R2R code, then two libcoreclr frames, then managed.
	b.Event(sampleEv(1_000_000, 7, managedType, 0x7f1000000100, 0x7f0000000011, 0x7f0000000021, 0x1010, 0x7f2000000010))
	p := b.Result()
	got := names(p, &p.Samples[0])
	want := []string{"System.Private.CoreLib.dll+0x1100", NativeFrame, "N.C.Run()", UnknownFrame}
	if len(got) != len(want) {
		t.Fatalf("stack %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("frame %d %q, want %q", i, got[i], want[i])
		}
	}
	// AppendStack names it alike after what dst holds, even after a
	// native frame there: the run of native frames starts afresh.
	ips := []uint64{0x7f0000000011, 0x7f1000000100, 0x7f0000000011}
	whole, _ := b.Symbols().Stack(ips, 1_000_000)
	dst := []Frame{{Name: NativeFrame, Kind: KindNative}}
	got2, _ := b.Symbols().AppendStack(dst, ips, 1_000_000)
	if len(whole) != 3 || !slices.Equal(got2, append(dst, whole...)) {
		t.Errorf("AppendStack %v after %v; Stack %v", got2, dst, whole)
	}
	// An External sample whose walk already ends in native code gets no
	// second [native code] leaf.
	b = New(testHeader, Options{})
	b.SetMappings(maps)
	b.Event(sampleEv(1_000_000, 7, []byte{1, 0, 0, 0}, 0x7f0000000011))
	p = b.Result()
	if got := names(p, &p.Samples[0]); len(got) != 1 || got[0] != NativeFrame {
		t.Errorf("external native stack %q", got)
	}
}

// TestImageNamer: with an image namer set, an address of a managed
// image's mapping is named by the method at its file offset (a managed
// frame of that module); an offset it cannot name stays module+0xOFFSET.
func TestImageNamer(t *testing.T) {
	maps := ParseProcMaps(`7f1000000000-7f1000800000 r-xp 00001000 08:01 789 /usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.0/System.Private.CoreLib.dll
`)
	var asked []string
	b := New(testHeader, Options{})
	b.SetMappings(maps)
	b.SetImageNamer(func(path string, off uint64) string {
		asked = append(asked, fmt.Sprintf("%s %#x", path, off))
		if off == 0x1100 {
			return "System.String.ReplaceHelper"
		}
		return ""
	})
	frames, _ := b.Symbols().Stack([]uint64{0x7f1000000100, 0x7f1000000201}, 1_000_000)
	want := []Frame{{Name: "System.String.ReplaceHelper", Module: "System.Private.CoreLib.dll", Kind: KindManaged},
		{Name: "System.Private.CoreLib.dll+0x1200", Module: "System.Private.CoreLib.dll", Kind: KindUnknown}}
	if !slices.Equal(frames, want) {
		t.Errorf("frames %+v, want %+v", frames, want)
	}
	lib := "/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.0/System.Private.CoreLib.dll"
	if !slices.Equal(asked, []string{lib + " 0x1100", lib + " 0x1200"}) {
		t.Errorf("namer asked %q", asked)
	}
}
