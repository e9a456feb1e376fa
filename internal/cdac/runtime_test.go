package cdac

import (
	"encoding/binary"
	"testing"
)

// synthetic is a runtime in fake memory: a descriptor with the fields
// Process reads (10.0.12's offsets), a thread store of two threads, and a
// sync table of five entries: 1 a held lock with a waiter, 2 a free
// entry, 3 a hash code's (no sync block), 4 an entry whose sync block
// names another index (not a sync block of this table), 5 a lock
// neither held nor waited for; then the end (zeros).
func synthetic(t *testing.T) *Process {
	t.Helper()
	d := &Descriptor{PtrSize: 8, Types: map[string]Type{
		"Thread":         {Size: -1, Fields: map[string]int{"Id": 16, "OSId": 296, "LinkNext": 112, "State": 0}},
		"ThreadStore":    {Size: -1, Fields: map[string]int{"FirstThreadLink": 88}},
		"SyncTableEntry": {Size: 16, Fields: map[string]int{"SyncBlock": 0}},
		"SyncBlock":      {Size: -1, Fields: map[string]int{"InteropInfo": 56}},
	}, Globals: map[string]uint64{"ThreadStore": 0x1000, "SyncTableEntries": 0x1008, "SyncBlockValueToObjectOffset": 4}}
	m := fakeMem{}
	m[0x1000] = u64(0x2000, 0x3000) // &s_pThreadStore → 0x2000; &g_pSyncTable → 0x3000
	store := make([]byte, 128)
	binary.LittleEndian.PutUint64(store[88:], 0x10000+112) // first thread's link
	m[0x2000] = store
	thread := func(id uint32, os, next uint64) []byte {
		b := make([]byte, 304)
		binary.LittleEndian.PutUint32(b[16:], id)
		binary.LittleEndian.PutUint64(b[296:], os)
		binary.LittleEndian.PutUint64(b[112:], next)
		return b
	}
	m[0x10000] = thread(4, 5598, 0x11000+112)
	m[0x11000] = thread(5, 5599, 0)
	table := make([]byte, 16*8)
	entry := func(i int, sb, obj uint64) {
		binary.LittleEndian.PutUint64(table[16*i:], sb)
		binary.LittleEndian.PutUint64(table[16*i+8:], obj)
	}
	entry(1, 0x4000, 0x9008)
	entry(2, 0, 0x7) // free: a tagged link
	entry(3, 0, 0x9100)
	entry(4, 0x4100, 0x9200)
	entry(5, 0x4200, 0x9300)
	m[0x3000] = table
	aware := func(state, rec, id uint32, os uint64, idx uint32) []byte {
		b := make([]byte, 64)
		binary.LittleEndian.PutUint32(b[0:], state)
		binary.LittleEndian.PutUint32(b[4:], rec)
		binary.LittleEndian.PutUint32(b[8:], id)
		binary.LittleEndian.PutUint64(b[16:], os)
		binary.LittleEndian.PutUint32(b[28:], idx)
		return b
	}
	m[0x4000] = aware(1|1<<6, 1, 4, 5598, 1|0x80000000) // held, one waiter, precious
	m[0x4100] = aware(1, 1, 5, 5599, 9)                 // names index 9
	m[0x4200] = aware(0, 0, 0, 0, 5)                    // free lock
	// Object headers: 0x9008's holds sync block index 1; 0x9400's a thin
	// lock of thread 5, twice; 0x9500's a hash code.
	hdr := func(w uint32) []byte { b := make([]byte, 16); binary.LittleEndian.PutUint32(b[4:], w); return b }
	m[0x9000] = hdr(bitIsHashOrSyncBlockIndex | 1)
	m[0x9400-8] = hdr(5 | 1<<16)
	m[0x9500-8] = hdr(bitIsHashOrSyncBlockIndex | bitIsHashCode | 1)
	return New(m, d, "")
}

func TestThreadsAndSyncLocks(t *testing.T) {
	p := synthetic(t)
	ths, err := p.Threads()
	if err != nil {
		t.Fatal(err)
	}
	if len(ths) != 2 || ths[0] != (Thread{Addr: 0x10000, ID: 4, OSTid: 5598}) || ths[1].ID != 5 || ths[1].OSTid != 5599 {
		t.Fatalf("threads %+v", ths)
	}
	ls, err := p.SyncLocks()
	if err != nil {
		t.Fatal(err)
	}
	want := SyncLock{Index: 1, Object: 0x9008, SyncBlock: 0x4000, Held: true, HolderID: 4, HolderOSTid: 5598, Recursion: 1, Waiters: 1}
	if len(ls) != 1 || ls[0] != want {
		t.Fatalf("sync locks %+v, want only %+v", ls, want)
	}
	if !p.Current(0x9008) {
		t.Error("0x9008 is its sync block's object")
	}
	if p.Current(0x9408) || p.Current(0x9200) || p.Current(0x9508) {
		t.Error("a thin lock, an unmapped header or a hash code counted as a sync block's object")
	}
	if id, rec, infl, err := p.ThinLock(0x9400); err != nil || infl || id != 5 || rec != 1 {
		t.Errorf("thin lock: holder %d recursion %d inflated %v %v", id, rec, infl, err)
	}
	// A loop in the thread list is an error, not a hang.
	m := p.mem.(fakeMem)
	loop := make([]byte, 304)
	copy(loop, m[0x11000])
	binary.LittleEndian.PutUint64(loop[112:], 0x10000+112)
	m[0x11000] = loop
	if _, err := p.Threads(); err == nil {
		t.Error("a thread list that loops was read to its end")
	}
}

// TestSyncLocksByThread: the AwareLock layout that names its holder by a
// Thread* (SyncBlock.InteropInfo at 48): the holder found in the thread
// store, with its OS id.
func TestSyncLocksByThread(t *testing.T) {
	p := synthetic(t)
	p.D.Types["SyncBlock"].Fields["InteropInfo"] = 48
	m := p.mem.(fakeMem)
	b := make([]byte, 64)
	binary.LittleEndian.PutUint32(b[0:], 1|2<<6)
	binary.LittleEndian.PutUint32(b[4:], 3)
	binary.LittleEndian.PutUint64(b[8:], 0x11000) // the second thread
	binary.LittleEndian.PutUint32(b[20:], 1)
	m[0x4000] = b
	m[0x4100] = make([]byte, 64) // index 0: not entry 4's
	m[0x4200] = make([]byte, 64)
	ls, err := p.SyncLocks()
	if err != nil {
		t.Fatal(err)
	}
	want := SyncLock{Index: 1, Object: 0x9008, SyncBlock: 0x4000, Held: true, HolderID: 5, HolderOSTid: 5599, Recursion: 3, Waiters: 2}
	if len(ls) != 1 || ls[0] != want {
		t.Fatalf("sync locks %+v, want %+v", ls, want)
	}
}

// TestBlockedOn: a ThreadBlockingInfo record on the thread's stack near
// its Frame (the sync block's address, kind MonitorLock, timeout -1, no
// next) names the sync block; records of another kind or with a next
// pointer off the stack do not, nor a sync block not asked about.
func TestBlockedOn(t *testing.T) {
	p := synthetic(t)
	p.D.Types["Thread"].Fields["Frame"] = 8
	m := p.mem.(fakeMem)
	th := m[0x10000]
	binary.LittleEndian.PutUint64(th[8:], 0x50800) // the Frame
	stack := make([]byte, 0x8000)                  // 0x4c000..0x54000
	rec := func(at int, obj uint64, kind uint32, next uint64) {
		binary.LittleEndian.PutUint64(stack[at:], obj)
		binary.LittleEndian.PutUint32(stack[at+8:], kind)
		binary.LittleEndian.PutUint32(stack[at+12:], 0xffffffff)
		binary.LittleEndian.PutUint64(stack[at+16:], next)
	}
	rec(0x3000, 0x4100, 1, 0)           // MonitorWait: not a lock wait
	rec(0x3100, 0x4100, 0, 0x123456789) // next is no stack address
	rec(0x4100, 0x4000, 0, 0)           // the record
	rec(0x4200, 0x4200, 0, 0)           // a sync block not asked about
	m[0x4c000] = stack
	ths, err := p.Threads()
	if err != nil {
		t.Fatal(err)
	}
	got := p.BlockedOn(ths[0], map[uint64]bool{0x4000: true, 0x4100: true})
	if len(got) != 1 || got[0] != 0x4000 {
		t.Errorf("blocked on %#x, want [0x4000]", got)
	}
	if got := p.BlockedOn(ths[1], map[uint64]bool{0x4000: true}); got != nil {
		t.Errorf("a thread without a Frame: %#x", got)
	}
}

func TestGenericName(t *testing.T) {
	for _, c := range []struct {
		def  string
		args []string
		want string
	}{
		{"System.Collections.Generic.List`1", []string{"Workload.Item"}, "System.Collections.Generic.List<Workload.Item>"},
		{"System.Collections.Generic.Dictionary`2", []string{"System.Int64", "?"}, "System.Collections.Generic.Dictionary<System.Int64,?>"},
		{"Ns.Outer`1+Inner`12", []string{"A", "B"}, "Ns.Outer+Inner<A,B>"},
	} {
		if got := genericName(c.def, c.args); got != c.want {
			t.Errorf("genericName(%q, %q) = %q, want %q", c.def, c.args, got, c.want)
		}
	}
}
