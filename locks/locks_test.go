package locks

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/stacks"
)

// run reads the whole trace at path (a cut one up to its cut) through the
// analyzer and the profiler's symbolizer; visit, if not nil, sees every
// event too.
func run(t testing.TB, path string, visit func(*nettrace.Event)) (*Result, *nettrace.Header) {
	t.Helper()
	r := tracetest.OpenFile(t, path, nettrace.NewReader)
	sym := stacks.NewSymbols(r.Header())
	a := New(r.Header(), Options{Symbols: sym})
	err := tracetest.ReadAll(t, r, func(ev *nettrace.Event) {
		a.Event(ev)
		sym.Event(ev)
		if visit != nil {
			visit(ev)
		}
	})
	if err != nil && !errors.Is(err, nettrace.ErrTruncated) {
		t.Fatal(err)
	}
	res := a.Result()
	if err := res.CheckValid(); err != nil {
		t.Errorf("%s: %v", path, err)
	}
	return res, r.Header()
}

// Synthetic events for the owner-mapping and pairing rules.

var (
	metaStart2  = &nettrace.Metadata{Runtime: nettrace.Runtime, EventID: clrevents.IDContentionStart, Version: 2}
	metaStop1   = &nettrace.Metadata{Runtime: nettrace.Runtime, EventID: clrevents.IDContentionStop, Version: 1}
	metaStop0   = &nettrace.Metadata{Runtime: nettrace.Runtime, EventID: clrevents.IDContentionStop, Version: 0}
	metaThread  = &nettrace.Metadata{Runtime: nettrace.Runtime, EventID: clrevents.IDThreadCreated}
	metaRundown = &nettrace.Metadata{Runtime: nettrace.Rundown, EventID: clrevents.IDRundownThreadDC}
)

func start2(ts int64, tid, lock, obj, owner uint64) *nettrace.Event {
	p := []byte{0, 1, 0}
	p = binary.LittleEndian.AppendUint64(p, lock)
	p = binary.LittleEndian.AppendUint64(p, obj)
	p = binary.LittleEndian.AppendUint64(p, owner)
	return &nettrace.Event{Meta: metaStart2, Timestamp: ts, ThreadID: tid, Payload: p, Stack: []uint64{0x1000, 0x2000}}
}

func stop1(ts int64, tid uint64, ns float64) *nettrace.Event {
	p := binary.LittleEndian.AppendUint64([]byte{0, 1, 0}, math.Float64bits(ns))
	return &nettrace.Event{Meta: metaStop1, Timestamp: ts, ThreadID: tid, Payload: p}
}

func threadEv(m *nettrace.Metadata, obj uint64, managed, os uint32) *nettrace.Event {
	p := binary.LittleEndian.AppendUint64(nil, obj)
	p = binary.LittleEndian.AppendUint64(p, 1)
	p = binary.LittleEndian.AppendUint32(p, 0)
	p = binary.LittleEndian.AppendUint32(p, managed)
	p = binary.LittleEndian.AppendUint32(p, os)
	p = binary.LittleEndian.AppendUint16(p, 1)
	return &nettrace.Event{Meta: m, ThreadID: uint64(os), Payload: p}
}

func TestOwnerMapping(t *testing.T) {
	hdr := &nettrace.Header{PointerSize: 8, QPCFrequency: 1_000_000_000}
	a := New(hdr, Options{})
	// Thread 100 waits behind a Thread* whose OS id only the rundown gives;
	// thread 101 behind managed id 7 (OS 300); thread 102 behind OS id 100;
	// thread 103 behind a value nothing explains.
	a.Event(threadEv(metaThread, 0x7f0000001000, 7, 300))
	a.Event(start2(10, 100, 0xA, 0xB, 0x7f0000002000))
	a.Event(stop1(20, 100, 1000))
	a.Event(start2(30, 101, 0xA, 0xB, 7))
	a.Event(stop1(40, 101, 2000))
	a.Event(start2(50, 102, 0xC, 0xD, 100))
	a.Event(stop1(60, 102, 3000))
	a.Event(start2(70, 103, 0xC, 0xD, 0xdead0000))
	a.Event(stop1(80, 103, 4000))
	a.Event(threadEv(metaRundown, 0x7f0000002000, 9, 200))
	r := a.Result()
	got := map[uint64]Owner{}
	for _, l := range r.Locks {
		for _, o := range l.Owners {
			got[o.Raw] = o
		}
	}
	check := func(raw, os uint64, via string, mapped bool) {
		t.Helper()
		o := got[raw]
		if o.OSThreadID != os || o.Via != via || o.Mapped != mapped {
			t.Errorf("owner %#x: %+v, want OS %d via %q", raw, o, os, via)
		}
	}
	check(0x7f0000002000, 200, "thread-object", true)
	check(7, 300, "managed-id", true)
	check(100, 100, "os-tid", true)
	check(0xdead0000, 0, "", false)
	if r.OwnerKind != "mixed" {
		t.Errorf("owner kind %q", r.OwnerKind)
	}
	if !slices.ContainsFunc(r.Notes, func(n string) bool { return strings.HasPrefix(n, "1 owner value(s) could not be mapped") }) {
		t.Errorf("notes %q", r.Notes)
	}
	// Lock 0xC (3000+4000 ns) ranks above lock 0xA (1000+2000 ns).
	if len(r.Locks) != 2 || r.Locks[0].ID != 0xC || r.Locks[0].TotalNs != 7000 || r.Locks[1].TotalNs != 3000 {
		t.Errorf("locks %+v", r.Locks)
	}
	// Frames without a symbolizer are the addresses.
	if f := r.Stacks[r.Locks[0].Stacks[0].Stack].Frames; !slices.Equal(f, []string{"0x1000", "0x2000"}) {
		t.Errorf("frames %q", f)
	}
}

func TestPairingRules(t *testing.T) {
	hdr := &nettrace.Header{PointerSize: 8, QPCFrequency: 10_000_000} // 100 ns ticks
	a := New(hdr, Options{})
	a.Event(stop1(5, 1, 500)) // began before the session
	a.Event(start2(10, 1, 0xA, 0, 0))
	a.Event(start2(20, 1, 0xA, 0, 0)) // the first start's stop was lost
	// A v0 stop has no duration: the timestamps give it (30 ticks = 3 µs).
	a.Event(&nettrace.Event{Meta: metaStop0, Timestamp: 50, ThreadID: 1, Payload: []byte{0, 1, 0}})
	// A stop on another thread does not end thread 1's wait.
	a.Event(start2(60, 1, 0xA, 0, 0))
	a.Event(stop1(70, 2, 100))
	r := a.Result()
	s := r.Summary
	if s.Contentions != 1 || s.TotalNs != 3000 || s.StopsWithoutStart != 2 || s.LostStarts != 1 || s.Unpaired != 1 {
		t.Errorf("summary %+v", s)
	}
	if len(r.StillWaiting) != 1 || r.StillWaiting[0].SoFarNs != 1000 || r.StillWaiting[0].Thread != 1 {
		t.Errorf("still waiting %+v", r.StillWaiting)
	}
	// A payload that does not decode is counted, not fatal.
	a.Event(&nettrace.Event{Meta: metaStart2, Timestamp: 80, ThreadID: 3, Payload: []byte{0}})
	if r := a.Result(); r.Summary.DecodeErrors != 1 || !strings.Contains(r.Summary.FirstError, "too short") {
		t.Errorf("decode errors %+v", r.Summary)
	}
}

// FuzzAnalyzer feeds arbitrary payloads under every event the analyzer
// reads: it must neither panic nor produce negative waits.
func FuzzAnalyzer(f *testing.F) {
	// Payloads from filtrace__contention.nettrace: ContentionStart v2,
	// ContentionStop v1, ThreadCreated, ContentionLockCreated.
	for i, h := range []string{
		"00090048f46c800002000000edc0000102000024c3000000000000",
		"0009000000000000a3fb40",
		"70c4e0fc000200001040e4fc000200000000000005000000f0dd00000900",
		"48f46c800002000000edc000010200000900",
	} {
		p, _ := hex.DecodeString(h)
		f.Add(p, uint8(i), uint32([]int{2, 1, 0, 0}[i]))
	}
	ids := []uint32{clrevents.IDContentionStart, clrevents.IDContentionStop, clrevents.IDThreadCreated,
		clrevents.IDContentionLockCreated, clrevents.IDBulkType, clrevents.IDGCAllocationTick, clrevents.IDAllocationSampled}
	f.Fuzz(func(t *testing.T, p []byte, which uint8, version uint32) {
		a := New(&nettrace.Header{PointerSize: 8, QPCFrequency: 1e9}, Options{})
		m := &nettrace.Metadata{Runtime: nettrace.Runtime, EventID: ids[int(which)%len(ids)], Version: version % 5}
		a.Event(start2(1, 1, 1, 2, 3))
		a.Event(&nettrace.Event{Meta: m, Timestamp: 2, ThreadID: 1, Payload: p, Stack: []uint64{1}})
		a.Event(stop1(3, 1, 2))
		r := a.Result()
		if err := r.CheckValid(); err != nil {
			t.Fatal(err)
		}
		if r.Summary.TotalNs < 0 || r.Summary.MaxNs < 0 {
			t.Fatalf("%+v", r.Summary)
		}
	})
}

func utf16z(s string) []byte {
	var b []byte
	for _, r := range s {
		b = binary.LittleEndian.AppendUint16(b, uint16(r))
	}
	return append(b, 0, 0)
}

// TestObjectType: a lock's object is named from the sampled allocation at
// its address when the lock is first seen; a later allocation at the same
// address (the lock object moved or died) does not rename it.
func TestObjectType(t *testing.T) {
	hdr := &nettrace.Header{PointerSize: 8, QPCFrequency: 1e9}
	a := New(hdr, Options{})
	bulk := binary.LittleEndian.AppendUint32(nil, 2)
	bulk = binary.LittleEndian.AppendUint16(bulk, 1)
	for i, name := range []string{"App.Gate", "System.String"} {
		bulk = binary.LittleEndian.AppendUint64(bulk, uint64(0x100+i)) // type id
		bulk = binary.LittleEndian.AppendUint64(bulk, 0x9)             // module
		bulk = binary.LittleEndian.AppendUint32(bulk, 0x02000001)
		bulk = binary.LittleEndian.AppendUint32(bulk, 0)
		bulk = append(bulk, 18)
		bulk = append(bulk, utf16z(name)...)
		bulk = binary.LittleEndian.AppendUint32(bulk, 0)
	}
	alloc := func(addr, typ uint64) *nettrace.Event {
		p := binary.LittleEndian.AppendUint64(nil, addr)
		p = binary.LittleEndian.AppendUint64(p, typ)
		p = binary.LittleEndian.AppendUint32(p, 1)
		p = binary.LittleEndian.AppendUint64(p, 24)
		p = binary.LittleEndian.AppendUint16(p, 1)
		return &nettrace.Event{Meta: &nettrace.Metadata{Runtime: nettrace.Runtime, EventID: clrevents.IDGCSampledObjectAllocHigh}, Payload: p}
	}
	a.Event(alloc(0x5000, 0x100)) // named by the BulkType that follows
	a.Event(&nettrace.Event{Meta: &nettrace.Metadata{Runtime: nettrace.Runtime, EventID: clrevents.IDBulkType}, Payload: bulk})
	a.Event(start2(10, 1, 0xA, 0x5000, 2))
	a.Event(stop1(20, 1, 100))
	a.Event(alloc(0x5000, 0x101))
	a.Event(start2(30, 1, 0xA, 0x5000, 2))
	a.Event(stop1(40, 1, 100))
	a.Event(start2(50, 1, 0xB, 0x6000, 2)) // never allocated while recording
	a.Event(stop1(60, 1, 50))
	r := a.Result()
	if len(r.Locks) != 2 || r.Locks[0].ObjectType != "App.Gate" || r.Locks[1].ObjectType != "" {
		t.Errorf("locks %+v", r.Locks)
	}
}

// TestMaxThreads: waiting threads past the bound share one "[other
// threads]" entry; no wait is lost and the result says how many were
// folded. (600,000 threads that each waited once made the analyzer hold
// 677 MB.)
func TestMaxThreads(t *testing.T) {
	hdr := &nettrace.Header{PointerSize: 8, QPCFrequency: 1e9}
	a := New(hdr, Options{MaxThreads: 3})
	for i := uint64(1); i <= 10; i++ {
		a.Event(start2(int64(i*100), i, 0xA, 0xB, 42))
		a.Event(stop1(int64(i*100+50), i, 1000))
	}
	r := a.Result()
	if r.Summary.Contentions != 10 || r.Summary.FoldedWaits != 7 || len(r.Threads) != 4 {
		t.Fatalf("%d waits, %d folded, %d threads", r.Summary.Contentions, r.Summary.FoldedWaits, len(r.Threads))
	}
	var other *Thread
	for i := range r.Threads {
		if r.Threads[i].OSThreadID == FoldedThreadID {
			other = &r.Threads[i]
		}
	}
	if other == nil || other.Name != FoldedThreadName || other.Contentions != 7 || other.TotalNs != 7000 {
		t.Errorf("folded thread %+v", other)
	}
	if !strings.Contains(strings.Join(r.Notes, "\n"), "7 waits of threads past the first 3 are counted under [other threads]") {
		t.Errorf("notes %q", r.Notes)
	}
}

// TestMaxLocksAndStacks: past the bounds, waits fold into one "[other
// locks]" lock and one "[other stacks]" stack; the totals stay exact.
func TestMaxLocksAndStacks(t *testing.T) {
	a := New(&nettrace.Header{PointerSize: 8, QPCFrequency: 1e9}, Options{MaxLocks: 2, MaxStacks: 2})
	for i := range 5 {
		ev := start2(int64(10*i), 1, uint64(100+i), 0, 7)
		ev.Stack = []uint64{0x1000 + uint64(i), 0x2000}
		a.Event(ev)
		a.Event(stop1(int64(10*i+5), 1, 1000))
	}
	r := a.Result()
	if err := r.CheckValid(); err != nil {
		t.Fatal(err)
	}
	if r.Summary.Contentions != 5 || r.Summary.TotalNs != 5000 || r.Summary.FoldedLockWaits != 3 || len(r.Locks) != 3 {
		t.Fatalf("summary %+v, %d locks: want 5 waits, 3 folded into a third lock", r.Summary, len(r.Locks))
	}
	var other *Lock
	for i := range r.Locks {
		if r.Locks[i].ID == FoldedLockID {
			other = &r.Locks[i]
		}
	}
	if other == nil || other.Contentions != 3 {
		t.Fatalf("no [other locks] entry with 3 waits: %+v", r.Locks)
	}
	// Two distinct stacks kept (plus the empty stack 0), the rest folded.
	if len(r.Stacks) != 4 || len(r.Stacks[3].Frames) != 1 || r.Stacks[3].Frames[0] != FoldedStackFrame {
		t.Fatalf("stacks %+v", r.Stacks)
	}
}
