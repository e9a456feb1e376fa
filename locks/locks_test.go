package locks

import (
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/internal/tracegen"
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

// Synthetic streams for the owner-mapping and pairing rules (package
// tracegen): a wait is ContentionStart v2 (lock, object, owner) with this
// stack, then ContentionStop v1 with the runtime's measure of the wait.

var waitStack = []uint64{0x1000, 0x2000}

// wait writes one wait of th from tick start to tick stop.
func wait(th *tracegen.Thread, start, stop int64, lock, obj, owner uint64, ns float64) {
	th.Tick(start).Stack(waitStack...).ContentionStart(lock, obj, owner).Tick(stop).ContentionStop(ns)
}

// analyze reads g's stream through a new analyzer.
func analyze(t *testing.T, g *tracegen.Trace, opt Options) *Analyzer {
	t.Helper()
	a := New(g.Header(), opt)
	g.Run(t, a.Event)
	return a
}

func TestOwnerMapping(t *testing.T) {
	g := tracegen.New()
	// Thread 100 waits behind a Thread* whose OS id only the rundown gives;
	// thread 101 behind managed id 7 (OS 300); thread 102 behind OS id 100;
	// thread 103 behind a value nothing explains.
	g.Thread(300).ThreadCreated(0x7f0000001000, 7, 300)
	wait(g.Thread(100), 10, 20, 0xA, 0xB, 0x7f0000002000, 1000)
	wait(g.Thread(101), 30, 40, 0xA, 0xB, 7, 2000)
	wait(g.Thread(102), 50, 60, 0xC, 0xD, 100, 3000)
	wait(g.Thread(103), 70, 80, 0xC, 0xD, 0xdead0000, 4000)
	g.Thread(200).Tick(90).RundownThread(0x7f0000002000, 9, 200)
	r := analyze(t, g, Options{}).Result()
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
	g := tracegen.NewOptions(tracegen.Options{QPCFrequency: 10_000_000}) // 100 ns ticks
	t1 := g.Thread(1)
	t1.Tick(5).ContentionStop(500) // began before the session
	t1.Tick(10).ContentionStart(0xA, 0, 0)
	t1.Tick(20).ContentionStart(0xA, 0, 0) // the first start's stop was lost
	// A v0 stop has no duration: the timestamps give it (30 ticks = 3 µs).
	t1.Tick(50).ContentionStopV0()
	// A stop on another thread does not end thread 1's wait.
	t1.Tick(60).ContentionStart(0xA, 0, 0)
	g.Thread(2).Tick(70).ContentionStop(100)
	// A payload that does not decode is counted, not fatal.
	g.Thread(3).Tick(80).Runtime(clrevents.IDContentionStart, 2, []byte{0})
	a := New(g.Header(), Options{})
	checked := false
	g.Run(t, func(ev *nettrace.Event) {
		if ev.Timestamp == 80 { // before the bad payload
			checked = true
			r := a.Result()
			s := r.Summary
			if s.Contentions != 1 || s.TotalNs != 3000 || s.StopsWithoutStart != 2 || s.LostStarts != 1 || s.Unpaired != 1 {
				t.Errorf("summary %+v", s)
			}
			if len(r.StillWaiting) != 1 || r.StillWaiting[0].SoFarNs != 1000 || r.StillWaiting[0].Thread != 1 {
				t.Errorf("still waiting %+v", r.StillWaiting)
			}
		}
		a.Event(ev)
	})
	if !checked {
		t.Fatal("the stream lost the bad payload's event")
	}
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
		g := tracegen.New()
		g.Thread(1).Tick(1).Stack(waitStack...).ContentionStart(1, 2, 3).
			Tick(2).Stack(1).Runtime(ids[int(which)%len(ids)], version%5, p).
			Tick(3).ContentionStop(2)
		r := analyze(t, g, Options{}).Result()
		if err := r.CheckValid(); err != nil {
			t.Fatal(err)
		}
		if r.Summary.TotalNs < 0 || r.Summary.MaxNs < 0 {
			t.Fatalf("%+v", r.Summary)
		}
	})
}

// TestObjectType: a lock's object is named from the sampled allocation at
// its address when the lock is first seen; a later allocation at the same
// address (the lock object moved or died) does not rename it.
func TestObjectType(t *testing.T) {
	g := tracegen.New()
	bulk := tracegen.Payload(nil).U32(2).U16(1)
	for i, name := range []string{"App.Gate", "System.String"} {
		// type id, module, token, flags, CorElementType, name, no type args
		bulk = bulk.U64(uint64(0x100 + i)).U64(0x9).U32(0x02000001).U32(0).U8(18).String(name).U32(0)
	}
	th := g.Thread(1)
	alloc := func(addr, typ uint64) {
		th.Runtime(clrevents.IDGCSampledObjectAllocHigh, 0, tracegen.Payload(nil).U64(addr).U64(typ).U32(1).U64(24).U16(1))
	}
	alloc(0x5000, 0x100) // named by the BulkType that follows
	th.Runtime(clrevents.IDBulkType, 0, bulk)
	wait(th, 10, 20, 0xA, 0x5000, 2, 100)
	th.Tick(25)
	alloc(0x5000, 0x101)
	wait(th, 30, 40, 0xA, 0x5000, 2, 100)
	wait(th, 50, 60, 0xB, 0x6000, 2, 50) // never allocated while recording
	r := analyze(t, g, Options{}).Result()
	if len(r.Locks) != 2 || r.Locks[0].ObjectType != "App.Gate" || r.Locks[1].ObjectType != "" {
		t.Errorf("locks %+v", r.Locks)
	}
}

// TestMaxThreads: waiting threads past the bound share one "[other
// threads]" entry; no wait is lost and the result says how many were
// folded. (600,000 threads that each waited once made the analyzer hold
// 677 MB.)
func TestMaxThreads(t *testing.T) {
	g := tracegen.New()
	for i := uint64(1); i <= 10; i++ {
		wait(g.Thread(i), int64(i*100), int64(i*100+50), 0xA, 0xB, 42, 1000)
	}
	r := analyze(t, g, Options{MaxThreads: 3}).Result()
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
	g := tracegen.New()
	th := g.Thread(1)
	for i := range 5 {
		th.Tick(int64(10*i)).Stack(0x1000+uint64(i), 0x2000).ContentionStart(uint64(100+i), 0, 7)
		th.Tick(int64(10*i + 5)).ContentionStop(1000)
	}
	r := analyze(t, g, Options{MaxLocks: 2, MaxStacks: 2}).Result()
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
