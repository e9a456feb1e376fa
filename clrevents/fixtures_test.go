package clrevents

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/nettrace"
)

// Tests on the fixtures (testdata/traces): .NET 10 traces clrspy recorded
// from the project's workload, checked against what the workload's runtime
// reported about itself on exit (NAME.workload.json).

// gcFixtures are the recordings with the GC keyword; each covers its
// program's whole run (launch mode), so every GC the runtime counted is in
// the trace.
var gcFixtures = []string{"gc-wks.nettrace", "gc-server.nettrace", "gc-induced.nettrace", "heap-alloc.nettrace"}

type gcEvents struct {
	starts   []GCStart
	ends     []GCEnd
	global   []GCGlobalHeapHistory
	perHeap  []GCPerHeapHistory
	suspends []GCSuspendEEBegin
}

func decodeGCs(t *testing.T, name string) *gcEvents {
	t.Helper()
	var g gcEvents
	r := tracetest.Open(t, name, nettrace.NewReader)
	ptr := r.Header().PointerSize
	check := func(err error) {
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	readAll(t, r, func(ev *nettrace.Event) {
		m := ev.Meta
		if m.Runtime != nettrace.Runtime {
			return
		}
		switch m.EventID {
		case IDGCStart:
			v, err := DecodeGCStart(ev.Payload, m.Version, ptr)
			check(err)
			g.starts = append(g.starts, v)
		case IDGCEnd:
			v, err := DecodeGCEnd(ev.Payload, m.Version, ptr)
			check(err)
			g.ends = append(g.ends, v)
		case IDGCGlobalHeapHistory:
			v, err := DecodeGCGlobalHeapHistory(ev.Payload, m.Version, ptr)
			check(err)
			g.global = append(g.global, v)
		case IDGCPerHeapHistory:
			v, err := DecodeGCPerHeapHistory(ev.Payload, m.Version, ptr)
			check(err)
			g.perHeap = append(g.perHeap, v)
		case IDGCSuspendEEBegin:
			v, err := DecodeGCSuspendEEBegin(ev.Payload, m.Version, ptr)
			check(err)
			g.suspends = append(g.suspends, v)
		}
	})
	return &g
}

// TestGCStartsMatchRuntime: every GC the runtime counted (GC.CollectionCount)
// has its GCStart and GCEnd, numbered 1..N, with the generations the
// runtime counted; the GCs GC.GetGCMemoryInfo describes have that kind and
// generation.
func TestGCStartsMatchRuntime(t *testing.T) {
	for _, name := range gcFixtures {
		t.Run(name, func(t *testing.T) {
			w := tracetest.Workload(t, name)
			g := decodeGCs(t, name)
			if len(g.starts) != w.Gen0 || len(g.ends) != w.Gen0 || len(g.global) != w.Gen0 {
				t.Fatalf("%d GCStart, %d GCEnd, %d GlobalHeapHistory; the runtime counted %d GCs", len(g.starts), len(g.ends), len(g.global), w.Gen0)
			}
			var byGen [3]int
			byNum := map[uint32]GCStart{}
			for i, s := range g.starts {
				if s.Count != uint32(i+1) {
					t.Errorf("GCStart %d has number %d", i, s.Count)
				}
				byGen[s.Depth]++
				byNum[s.Count] = s
			}
			if want := tracetest.GCsByGeneration(w); byGen != want {
				t.Errorf("GCs by generation %v, the runtime's counts give %v", byGen, want)
			}
			for kind, info := range w.GCInfo {
				s := byNum[uint32(info.Index)]
				if int(s.Depth) != info.Generation || (s.Type == GCBackground) != (kind == "Background") || (kind == "FullBlocking" && s.Type != GCNonConcurrent) {
					t.Errorf("GCMemoryInfo %s: GC %d gen %d; the trace has %+v", kind, info.Index, info.Generation, s)
				}
			}
			heaps := 1
			if w.ServerGC {
				heaps = 2
			}
			perHeap := map[uint32]int{}
			for _, p := range g.perHeap {
				perHeap[p.HeapIndex]++
			}
			for _, gh := range g.global {
				if int(gh.NumHeaps) != heaps {
					t.Fatalf("GlobalHeapHistory with %d heaps, want %d", gh.NumHeaps, heaps)
				}
			}
			if len(perHeap) != heaps || len(g.perHeap) != heaps*w.Gen0 {
				t.Errorf("PerHeapHistory by heap %v, want %d per heap", perHeap, w.Gen0)
			}
		})
	}
}

// TestGCKinds: the facts of each recording the analyses rely on
// (testdata/traces/README.md).
func TestGCKinds(t *testing.T) {
	count := func(name string) (types [3]int, reasons map[GCReason]int, susp map[SuspendReason]int) {
		g := decodeGCs(t, name)
		reasons, susp = map[GCReason]int{}, map[SuspendReason]int{}
		for _, s := range g.starts {
			types[s.Type]++
			reasons[s.Reason]++
		}
		for _, s := range g.suspends {
			susp[s.Reason]++
		}
		return
	}
	types, reasons, susp := count("gc-wks.nettrace")
	if types != [3]int{34, 5, 1} || reasons[ReasonInduced] != 0 || susp[SuspendForGCPrep] != 5 {
		t.Errorf("gc-wks: types %v, reasons %v, suspensions %v", types, reasons, susp)
	}
	// Induced GCs: three GC.Collect calls per generation (one gen1 call
	// became a gen2 GC), all blocking.
	types, reasons, susp = count("gc-induced.nettrace")
	if types != [3]int{9, 0, 0} || reasons[ReasonInduced] != 9 || len(reasons) != 1 || susp[SuspendForGC] != 9 {
		t.Errorf("gc-induced: types %v, reasons %v, suspensions %v", types, reasons, susp)
	}
	types, _, _ = count("gc-server.nettrace")
	if types != [3]int{11, 1, 0} {
		t.Errorf("gc-server: types %v", types)
	}
}

// TestContentionMatchesWorkload: the .NET 10 contention events of the
// contention fixture (ContentionStart v2 with lock ids) against the
// workload's own record: its four threads' OS ids, how many acquisitions
// each had to wait for, and how long each waited by its own stopwatch.
func TestContentionMatchesWorkload(t *testing.T) {
	w := tracetest.Workload(t, "contention.nettrace")
	var tids []uint64
	var contended []int
	var waitMs []float64
	if err := errors.Join(w.Get("tids", &tids), w.Get("contended", &contended), w.Get("waitMs", &waitMs)); err != nil {
		t.Fatal(err)
	}
	r := tracetest.Open(t, "contention.nettrace", nettrace.NewReader)
	starts, stops := map[uint64]int{}, map[uint64]int{}
	waitNs := map[uint64]float64{}
	locks, objects := map[uint64]bool{}, map[uint64]bool{}
	var created []ContentionLockCreated
	readAll(t, r, func(ev *nettrace.Event) {
		m := ev.Meta
		switch {
		case Is(m, nettrace.Runtime, IDContentionStart):
			s, err := DecodeContentionStart(ev.Payload, m.Version, 8)
			if err != nil || m.Version != 2 || !s.HasLock || s.Flags != ContentionManaged {
				t.Fatalf("start v%d %+v %v", m.Version, s, err)
			}
			if s.LockOwnerThreadID != 0 && !slices.Contains(tids, s.LockOwnerThreadID) {
				t.Errorf("owner %d is not a workload thread %v", s.LockOwnerThreadID, tids)
			}
			starts[ev.ThreadID]++
			locks[s.LockID], objects[s.AssociatedObjectID] = true, true
		case Is(m, nettrace.Runtime, IDContentionStop):
			s, err := DecodeContentionStop(ev.Payload, m.Version, 8)
			if err != nil || !s.HasDuration {
				t.Fatalf("stop v%d %+v %v", m.Version, s, err)
			}
			stops[ev.ThreadID]++
			waitNs[ev.ThreadID] += s.DurationNs
		case Is(m, nettrace.Runtime, IDContentionLockCreated):
			c, err := DecodeContentionLockCreated(ev.Payload, m.Version, 8)
			if err != nil {
				t.Fatal(err)
			}
			created = append(created, c)
		}
	})
	if len(locks) != 1 || len(objects) != 1 || len(created) != 1 || !locks[created[0].LockID] || !objects[created[0].AssociatedObjectID] {
		t.Errorf("locks %v on objects %v, created %+v", locks, objects, created)
	}
	if len(starts) != len(tids) {
		t.Errorf("waiting threads %v, workload threads %v", starts, tids)
	}
	for i, tid := range tids {
		if starts[tid] != contended[i] || stops[tid] != contended[i] {
			t.Errorf("thread %d: %d starts, %d stops; the workload waited %d times", tid, starts[tid], stops[tid], contended[i])
		}
		// The workload's stopwatch also times the failed TryEnter before
		// the wait and its own wake-up after the runtime's stop event:
		// it may exceed the runtime's figure, by well under 1 ms per thread.
		if d := waitMs[i] - waitNs[tid]/1e6; d < 0 || d > 1 {
			t.Errorf("thread %d: runtime says %.3f ms of waits, the workload measured %.3f ms", tid, waitNs[tid]/1e6, waitMs[i])
		}
	}
}

// TestRundownAndSamples: the rundown names the workload's methods and
// module, and the sample profiler's samples are managed or external
// (blocked in native code), the latter dominating the contention fixture
// whose threads sleep or wait.
func TestRundownAndSamples(t *testing.T) {
	type facts struct {
		methods   map[string]Method
		workload  bool
		types     [3]int
		withStack int
	}
	read := func(name string) facts {
		f := facts{methods: map[string]Method{}}
		r := tracetest.Open(t, name, nettrace.NewReader)
		readAll(t, r, func(ev *nettrace.Event) {
			m := ev.Meta
			switch {
			case Is(m, nettrace.Rundown, IDRundownMethodDCEndVerbose):
				me, err := DecodeMethodVerbose(ev.Payload, m.Version, 8)
				if err != nil || me.Name == "" || me.StartAddress == 0 {
					t.Fatalf("%s: method %+v %v", name, me, err)
				}
				f.methods[me.Namespace+"."+me.Name] = me
			case Is(m, nettrace.Rundown, IDRundownModuleDCEnd):
				mo, err := DecodeModule(ev.Payload, m.Version, 8)
				if err != nil {
					t.Fatal(err)
				}
				f.workload = f.workload || strings.HasSuffix(mo.ILPath, "/Workload.dll")
			case Is(m, nettrace.SampleProfiler, IDThreadSample):
				s, err := DecodeThreadSample(ev.Payload, m.Version, 8)
				if err != nil || s.Type > SampleManaged {
					t.Fatalf("%s: sample %+v %v", name, s, err)
				}
				f.types[s.Type]++
				if len(ev.Stack) > 0 {
					f.withStack++
				}
			}
		})
		return f
	}
	cpu := read("cpu.nettrace")
	for _, n := range []string{"Workload.Cpu.HotA", "Workload.Cpu.HotB", "Workload.Cpu.Run", "Workload.Program.Main"} {
		if me, ok := cpu.methods[n]; !ok || me.Size == 0 {
			t.Errorf("cpu: rundown lacks %s (%+v)", n, me)
		}
	}
	if !cpu.workload || cpu.types != [3]int{0, 63, 759} || cpu.withStack != 822 {
		t.Errorf("cpu: Workload.dll %v, samples by type %v, %d with a stack", cpu.workload, cpu.types, cpu.withStack)
	}
	c := read("contention.nettrace")
	if c.types[SampleExternal] <= 10*c.types[SampleManaged] || c.types[SampleExternal]+c.types[SampleManaged] != 938 {
		t.Errorf("contention: samples by type %v", c.types)
	}
}

// TestAllocationsAndMovement: the allocation ticks of gc-induced (v4: type,
// address, size, stack) each follow ~100 KB of allocation, and its moved
// and surviving ranges each fall inside a GC; the sampled allocations of
// heap-alloc name the workload's types.
func TestAllocationsAndMovement(t *testing.T) {
	r := tracetest.Open(t, "gc-induced.nettrace", nettrace.NewReader)
	var ticks, moved, surviving, genRanges int
	var kinds [2]int
	inGC := false
	readAll(t, r, func(ev *nettrace.Event) {
		m := ev.Meta
		if m.Runtime != nettrace.Runtime {
			return
		}
		switch m.EventID {
		case IDGCStart:
			inGC = true
		case IDGCEnd:
			inGC = false
		case IDGCAllocationTick:
			a, err := DecodeAllocationTick(ev.Payload, m.Version, 8)
			if err != nil || m.Version != 4 || !a.HasType || !a.HasAddress || !a.HasSize || a.TypeName == "" || len(ev.Stack) == 0 {
				t.Fatalf("tick v%d %+v %v", m.Version, a, err)
			}
			// The runtime fires a tick once an allocation crosses 100 KB
			// (small and large objects counted apart) since the last one.
			if a.AllocationAmount < 100_000 || a.AllocationAmount > 140_000 || a.AllocationKind > AllocLarge {
				t.Errorf("tick after %d bytes of kind %d", a.AllocationAmount, a.AllocationKind)
			}
			ticks++
			kinds[a.AllocationKind]++
		case IDGCBulkMovedObjectRanges, IDGCBulkSurvivingObjectRanges, IDGCGenerationRange:
			if !inGC && m.EventID != IDGCGenerationRange {
				t.Errorf("%s outside a GC", m.Name)
			}
			switch m.EventID {
			case IDGCBulkMovedObjectRanges:
				b, err := DecodeBulkMovedRanges(ev.Payload, m.Version, 8)
				if err != nil {
					t.Fatal(err)
				}
				moved += len(b.Ranges)
			case IDGCBulkSurvivingObjectRanges:
				b, err := DecodeBulkSurvivingRanges(ev.Payload, m.Version, 8)
				if err != nil {
					t.Fatal(err)
				}
				surviving += len(b.Ranges)
			default:
				if _, err := DecodeGenerationRange(ev.Payload, m.Version, 8); err != nil {
					t.Fatal(err)
				}
				genRanges++
			}
		}
	})
	if ticks != 26 || kinds != [2]int{25, 1} {
		t.Errorf("%d ticks, by kind %v", ticks, kinds)
	}
	if moved != 763 || surviving != 21 || genRanges == 0 {
		t.Errorf("%d moved, %d surviving ranges, %d generation ranges", moved, surviving, genRanges)
	}

	types := map[string]int{}
	var sampled int
	r = tracetest.Open(t, "heap-alloc.nettrace", nettrace.NewReader)
	readAll(t, r, func(ev *nettrace.Event) {
		if Is(ev.Meta, nettrace.Runtime, IDAllocationSampled) {
			a, err := DecodeAllocationSampled(ev.Payload, ev.Meta.Version, 8)
			if err != nil || a.Address == 0 || a.ObjectSize == 0 {
				t.Fatalf("sampled %+v %v", a, err)
			}
			types[a.TypeName]++
			sampled++
		}
	})
	if sampled != 637 || types["Node"] != 187 || types["System.Byte[]"] != 427 {
		t.Errorf("%d sampled allocations, by type %v", sampled, types)
	}
}

// TestDescribeGolden pins every typed decoder on the GC events of the cut
// fixture through the canonical dump (nettrace.Dumper with Describe).
func TestDescribeGolden(t *testing.T) {
	r := tracetest.Open(t, "gc-wks.truncated.nettrace", nettrace.NewReader)
	var b bytes.Buffer
	if err := (nettrace.Dumper{Describe: Describe}).Dump(&b, r); !errors.Is(err, nettrace.ErrTruncated) {
		t.Fatalf("dump ended with %v, want the truncation", err)
	}
	if n := strings.Count(b.String(), " payload="); n != 18 {
		// Only GC/CreateSegment (11), GC/FinalizersStop (5), GC/FreeSegment
		// and Runtime/Start have no typed decoder among these events.
		t.Errorf("%d events shown in hex", n)
	}
	tracetest.Golden(t, "describe-gc-wks.truncated.txt", b.Bytes())
}
