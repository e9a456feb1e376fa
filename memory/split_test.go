package memory

import (
	"os"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/internal/procfs"
)

func fixture(t *testing.T) []procfs.SmapsEntry {
	t.Helper()
	b, err := os.ReadFile("testdata/nativeleak.smaps")
	if err != nil {
		t.Fatal(err)
	}
	return procfs.ParseSmaps(b)
}

const mib = 1 << 20

// TestClassifyNativeLeak splits the smaps of a real nativeleak workload
// (net10.0; it said of itself: hglobal=16777216 malloc=8388608
// managed=33554432 heapSize=33545704 committed=46284800
// fragmented=201400) and checks each part against what the process held
// and where the mappings are.
func TestClassifyNativeLeak(t *testing.T) {
	es := fixture(t)
	if len(es) != 270 {
		t.Fatalf("%d mappings, want 270", len(es))
	}
	s := Classify(es, Hints{})
	var sum, rss uint64
	for _, p := range s.Parts {
		sum += p.Bytes
	}
	for _, e := range es {
		rss += e.Rss
	}
	if sum != s.Rss || rss != s.Rss {
		t.Fatalf("parts add up to %d, RSS %d, the mappings' %d", sum, s.Rss, rss)
	}
	want := map[Kind]uint64{}
	for _, p := range s.Parts {
		want[p.Kind] = p.Bytes
		t.Logf("%-15s %9d", p.Kind, p.Bytes)
	}
	// The GC's reservation: bookkeeping from the first mapping after the
	// 8 MiB thread stack below it, regions from the first 4 MiB-aligned
	// committed one, to the end of the regions range.
	if s.GCStart != 0x7f4f67877000 || s.GCRegions != 0x7f4f83000000 || s.GCEnd != 0x7f5b48000000 || s.GCFoundBy != FoundByLayout {
		t.Errorf("GC range %#x %#x %#x by %s", s.GCStart, s.GCRegions, s.GCEnd, s.GCFoundBy)
	}
	// Native: the leaked 24 MiB, in the main thread's [heap] (16 KB blocks
	// are under glibc's mmap threshold), and what the runtime malloc'd.
	if n := s.Bytes(NativeHeap); n < 24*mib || n > 24*mib+2*mib {
		t.Errorf("native heap %d, want the 24 MiB leaked and under 2 MiB more", n)
	}
	// GC heap: at least the live objects (heap size less fragmentation),
	// at most what the GC committed.
	if g := s.Bytes(GCHeap); g < 33545704-201400 || g > 46284800 {
		t.Errorf("GC heap %d, want between the live objects and the GC's commit", g)
	}
	if b := s.Bytes(GCBookkeeping); b == 0 || b > mib {
		t.Errorf("GC bookkeeping %d, want some, under 1 MiB", b)
	}
	for _, k := range []Kind{JITCode, Loader, Stacks, Images} {
		if s.Bytes(k) == 0 {
			t.Errorf("%s: 0", k)
		}
	}
	if o := s.Bytes(Other); o > 256<<10 {
		t.Errorf("other %d, want under 256 KiB (nothing in this process is unclaimed)", o)
	}
	if len(s.Images) == 0 || !strings.HasSuffix(s.Images[0].Path, "System.Private.CoreLib.dll") {
		t.Errorf("top image %+v, want System.Private.CoreLib.dll", s.Images[:1])
	}
	// With a heap address from the runtime the same range is found, by it.
	r := Classify(es, Hints{HeapAddresses: []uint64{0x7f4f85000100}})
	if r.GCStart != s.GCStart || r.GCRegions != s.GCRegions || r.GCEnd != s.GCEnd || r.GCFoundBy != FoundByRuntime {
		t.Errorf("anchored GC range %#x %#x %#x by %s", r.GCStart, r.GCRegions, r.GCEnd, r.GCFoundBy)
	}
}

// TestClassifyKinds: one mapping of each kind, by the rules.
func TestClassifyKinds(t *testing.T) {
	smaps := `
55d000000000-55d000100000 rw-p 00000000 00:00 0                          [heap]
Rss:                1024 kB
VmFlags: rd wr mr mw me ac
7f0000000000-7f0000021000 rw-p 00000000 00:00 0
Rss:                 100 kB
VmFlags: rd wr mr mw me nr
7f0000021000-7f0004000000 ---p 00000000 00:00 0
Rss:                   0 kB
VmFlags: mr mw me nr
7f1000000000-7f1000001000 ---p 00000000 00:00 0
Rss:                   0 kB
VmFlags: mr mw me
7f1000001000-7f1000801000 rw-p 00000000 00:00 0
Rss:                  64 kB
VmFlags: rd wr mr mw me ac
7f1000801000-7f1000900000 rw-p 00000000 00:00 0
Rss:                  32 kB
VmFlags: rd wr mr mw me ac
7f1000900000-7f1040000000 ---p 00000000 00:00 0
Rss:                   0 kB
VmFlags: mr mw me dd
7f1040000000-7f1040400000 rw-p 00000000 00:00 0
Rss:                4096 kB
VmFlags: rd wr mr mw me ac
7f1040400000-7f2000000000 ---p 00000000 00:00 0
Rss:                   0 kB
VmFlags: mr mw me dd
7f3000000000-7f3000001000 r-xs 00000000 00:01 5                          /memfd:doublemapper (deleted)
Rss:                   4 kB
VmFlags: rd ex sh mr mw me ms
7f3000001000-7f3000002000 rw-s 00001000 00:01 5                          /memfd:doublemapper (deleted)
Rss:                   8 kB
VmFlags: rd wr sh mr mw me ms
7f3000002000-7f3080000000 ---p 00000000 00:00 0
Rss:                   0 kB
VmFlags: mr mw me dd
7f4000000000-7f4000100000 r-xp 00000000 08:01 77                         /usr/lib/libc.so.6
Rss:                 512 kB
VmFlags: rd ex mr mw me
7f4000100000-7f4000101000 rw-p 00100000 08:01 77                         /usr/lib/libc.so.6
Rss:                   4 kB
VmFlags: rd wr mr mw me ac
7f4000101000-7f4000105000 rw-p 00000000 00:00 0
Rss:                  16 kB
VmFlags: rd wr mr mw me ac
7f5000000000-7f5000200000 rw-p 00000000 00:00 0
Rss:                2048 kB
VmFlags: rd wr mr mw me ac
7ffc00000000-7ffc00021000 rw-p 00000000 00:00 0                          [stack]
Rss:                  60 kB
VmFlags: rd wr mr mw me gd ac
`
	es := procfs.ParseSmaps([]byte(smaps))
	s := Classify(es, Hints{})
	want := map[Kind]uint64{
		NativeHeap:    (1024 + 100) << 10,
		Stacks:        (64 + 60) << 10,
		GCBookkeeping: 32 << 10,
		GCHeap:        4096 << 10,
		JITCode:       4 << 10,
		Loader:        8 << 10,
		Images:        (512 + 4 + 16) << 10,
		Other:         2048 << 10,
	}
	for k, v := range want {
		if got := s.Bytes(k); got != v {
			t.Errorf("%s: %d, want %d", k, got, v)
		}
	}
	if s.GCStart != 0x7f1000801000 || s.GCRegions != 0x7f1040000000 || s.GCEnd != 0x7f2000000000 {
		t.Errorf("GC range %#x %#x %#x", s.GCStart, s.GCRegions, s.GCEnd)
	}
	if len(s.Images) != 1 || s.Images[0].Path != "/usr/lib/libc.so.6" || s.Images[0].Bytes != (512+4+16)<<10 {
		t.Errorf("images %+v", s.Images)
	}
	// A stack pointer makes a stack of a mapping with no guard.
	s = Classify(es, Hints{StackPointers: []uint64{0x7f5000100000}})
	if s.Bytes(Stacks) != (64+60+2048)<<10 || s.Bytes(Other) != 0 {
		t.Errorf("with a stack pointer: stacks %d other %d", s.Bytes(Stacks), s.Bytes(Other))
	}
}

func split(rss uint64, parts map[Kind]uint64) Split {
	s := Split{Rss: rss}
	for _, k := range Kinds {
		s.Parts = append(s.Parts, Part{Kind: k, Bytes: parts[k]})
	}
	return s
}

// TestJudge: the part that grows is named, with its rate, and the GC heap
// said flat or not; the cgroup's share of its limit follows.
func TestJudge(t *testing.T) {
	ss := []Sample{
		{AtNs: 0, Split: split(100*mib, map[Kind]uint64{GCHeap: 40 * mib, NativeHeap: 10 * mib})},
		{AtNs: 1e9, Split: split(104*mib, map[Kind]uint64{GCHeap: 40 * mib, NativeHeap: 14 * mib})},
		{AtNs: 2e9, Split: split(108*mib, map[Kind]uint64{GCHeap: 40*mib + 100<<10, NativeHeap: 18 * mib})},
	}
	if got, want := Judge(ss, 0, 0), "RSS +8.0 MiB in 2 s: native heap grows 4.0 MiB/s (+8.0 MiB) while the GC heap is flat"; got != want {
		t.Errorf("Judge:\n got %q\nwant %q", got, want)
	}
	if got, want := Judge(ss[:1], 200*mib, 174*mib), "one sample, no trend (--duration samples the split over time); 87 % of the cgroup's memory limit (174.0 MiB of 200.0 MiB)"; got != want {
		t.Errorf("Judge:\n got %q\nwant %q", got, want)
	}
	ss[2].Split = split(100*mib, map[Kind]uint64{GCHeap: 40 * mib, NativeHeap: 10 * mib})
	ss[1].Split = ss[2].Split
	if got, want := Judge(ss, 0, 0), "RSS +0.0 MiB in 2 s: flat, no part grows"; got != want {
		t.Errorf("Judge:\n got %q\nwant %q", got, want)
	}
	ss[2].Split = split(130*mib, map[Kind]uint64{GCHeap: 70 * mib, NativeHeap: 10 * mib})
	if got, want := Judge(ss, 0, 0), "RSS +30.0 MiB in 2 s: GC heap grows 15.0 MiB/s (+30.0 MiB)"; got != want {
		t.Errorf("Judge:\n got %q\nwant %q", got, want)
	}
}

// TestClassifyBssBelowGC: a library's .bss right below the GC's
// reservation stays the library's, and a stack right below stays a stack.
func TestClassifyBssBelowGC(t *testing.T) {
	es := procfs.ParseSmaps([]byte(`7f4000100000-7f4000101000 rw-p 00100000 08:01 77                         /usr/lib/libfoo.so
Rss:                   4 kB
7f4000101000-7f4000105000 rw-p 00000000 00:00 0
Rss:                  16 kB
7f4000105000-7f4000200000 ---p 00000000 00:00 0
Rss:                   0 kB
VmFlags: mr mw me dd
7f4000200000-7f4000201000 rw-p 00000000 00:00 0
Rss:                   4 kB
7f4000201000-7f4000400000 ---p 00000000 00:00 0
Rss:                   0 kB
VmFlags: mr mw me dd
7f4000400000-7f4000800000 rw-p 00000000 00:00 0
Rss:                 400 kB
7f4000800000-7f4100000000 ---p 00000000 00:00 0
Rss:                   0 kB
VmFlags: mr mw me dd
`))
	s := Classify(es, Hints{})
	if s.Bytes(Images) != 20<<10 || s.Bytes(GCBookkeeping) != 4<<10 || s.Bytes(GCHeap) != 400<<10 || s.GCStart != 0x7f4000105000 {
		t.Errorf("images %d bookkeeping %d heap %d, GC from %#x", s.Bytes(Images), s.Bytes(GCBookkeeping), s.Bytes(GCHeap), s.GCStart)
	}
}

// TestTimeToLimit: usage growing 4 MiB/s with 100 MiB of headroom left
// reaches the limit in 25 s; flat usage never does.
func TestTimeToLimit(t *testing.T) {
	ss := []Sample{
		{AtNs: 0, Split: split(100*mib, nil), CgroupUsage: 92 * mib},
		{AtNs: 1e9, Split: split(104*mib, nil), CgroupUsage: 96 * mib},
		{AtNs: 2e9, Split: split(108*mib, nil), CgroupUsage: 100 * mib},
	}
	if eta, ok := TimeToLimit(ss, 200*mib); !ok || eta != 25 {
		t.Errorf("%v %v, want 25 s", eta, ok)
	}
	if got, want := Judge(ss, 200*mib, 100*mib), "50 % of the cgroup's memory limit (100.0 MiB of 200.0 MiB), reached in 25 s at this rate"; !strings.HasSuffix(got, want) {
		t.Errorf("Judge %q, want ...%q", got, want)
	}
	for i := range ss {
		ss[i].CgroupUsage = 100 * mib
	}
	if _, ok := TimeToLimit(ss, 200*mib); ok {
		t.Error("flat usage reaches the limit")
	}
}
