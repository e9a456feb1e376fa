//go:build compat

package stacks

import (
	"testing"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/nettrace"
)

// TestSymbolsAllocationStacks names the AllocationTick stacks of the
// filtrace alloc benchmark (.NET 10) with the exported table: every tick's
// stack resolves, and the workload's allocating method (AllocLoop.
// AllocateBuffers, CATALOG.md §8.3) is among the leaf-side frames of the
// System.Byte[] and System.String ticks.
func TestSymbolsAllocationStacks(t *testing.T) {
	r := tracetest.OpenCompat(t, "filtrace__alloc.nettrace", nettrace.NewReader)
	sym := NewSymbols(r.Header())
	var stacks [][]uint64
	if err := tracetest.ReadAll(t, r, func(ev *nettrace.Event) {
		sym.Event(ev)
		if ev.Meta.Runtime == nettrace.Runtime && ev.Meta.EventID == clrevents.IDGCAllocationTick {
			stacks = append(stacks, append([]uint64(nil), ev.Stack...))
		}
	}); err != nil {
		t.Fatal(err)
	}
	if len(stacks) != 254 || sym.Stats().DecodeErrors != 0 {
		t.Fatalf("%d allocation stacks (want 254), %d decode errors", len(stacks), sym.Stats().DecodeErrors)
	}
	withSite, unresolvedLeaf := 0, 0
	for _, st := range stacks {
		frames := sym.Frames(st)
		if len(frames) == 0 || frames[0][:2] == "0x" {
			unresolvedLeaf++
			continue
		}
		for _, fr := range frames[:min(3, len(frames))] {
			if fr == "TraceQ.Fixtures.HotLoopBench.AllocLoop.AllocateBuffers(int32)" {
				withSite++
				break
			}
		}
	}
	if unresolvedLeaf != 0 {
		t.Errorf("%d stacks with an unresolved leaf", unresolvedLeaf)
	}
	// The catalog has 155 System.Byte[] and 90 System.String ticks (245)
	// from the benchmark; 243 of them pass through AllocateBuffers within
	// three frames (directly, via String.Ctor, RentByteBuffer or RentLabel),
	// as measured when this test was written.
	if withSite != 243 {
		t.Errorf("AllocateBuffers(int32) near the leaf of %d of 254 stacks, want 243", withSite)
	}
	var nilSym *Symbols
	if got := nilSym.Frames([]uint64{0x1234}); len(got) != 1 || got[0] != "0x1234" {
		t.Errorf("nil table: %v", got)
	}
}

// TestSymbolsLookup names an address by time: the code of
// TraceQ.Fixtures.HotLoopBench.AllocLoop.AllocateBuffers(int32) is found
// at any time with its module and tier, an address past every method is
// not, and a nil table knows nothing.
func TestSymbolsLookup(t *testing.T) {
	r := tracetest.OpenCompat(t, "filtrace__alloc.nettrace", nettrace.NewReader)
	sym := NewSymbols(r.Header())
	var start uint64
	tracetest.ReadAll(t, r, func(ev *nettrace.Event) {
		sym.Event(ev)
		if ev.Meta.Runtime == nettrace.Runtime && ev.Meta.EventID == clrevents.IDMethodLoadVerbose ||
			ev.Meta.Runtime == nettrace.Rundown && ev.Meta.EventID == clrevents.IDRundownMethodDCEndVerbose {
			m, err := clrevents.DecodeMethodVerbose(ev.Payload, ev.Meta.Version, r.Header().PointerSize)
			if err == nil && m.Name == "AllocateBuffers" {
				start = m.StartAddress
			}
		}
	})
	if start == 0 {
		t.Fatal("no method event for AllocateBuffers")
	}
	m, ok := sym.Lookup(start+3, 1<<62)
	if !ok || m.Name != "TraceQ.Fixtures.HotLoopBench.AllocLoop.AllocateBuffers(int32)" || m.Start != start || m.End <= start || m.Module == "" {
		t.Errorf("Lookup = %+v %v", m, ok)
	}
	if _, ok := sym.Lookup(^uint64(0)-16, 0); ok {
		t.Error("an address past every method was named")
	}
	if sym.Len() < 1000 {
		t.Errorf("%d method bodies", sym.Len())
	}
	var none *Symbols
	if _, ok := none.Lookup(start, 0); ok || none.Len() != 0 {
		t.Error("nil table")
	}
}
