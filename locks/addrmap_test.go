package locks

import (
	"math/rand/v2"
	"testing"

	"github.com/clrspy/clrspy/nettrace"
)

// addrMap answers as fifoMap does (the same entries forgotten in the same
// order) through sets of new and known addresses, with addresses that
// share their home slots so that removals move probe runs.
func TestAddrMapIsFIFOMap(t *testing.T) {
	for _, max := range []int{1, 3, 64, 1000} {
		want, got := newFIFOMap[uint64, uint64](max), newAddrMap(max)
		rng := rand.New(rand.NewPCG(1, uint64(max)))
		space := uint64(3 * max)
		for i := range 200 * max {
			addr := rng.Uint64N(space) * 8 << 20 // aligned, and clustered by the hash's top bits
			if i%7 == 0 {
				addr = rng.Uint64N(space) * 8
			}
			want.set(addr, uint64(i))
			got.set(addr, uint64(i))
			probe := rng.Uint64N(space) * 8 << 20
			for _, a := range []uint64{addr, probe, probe >> 20} {
				w, wok := want.get(a)
				g, gok := got.get(a)
				if w != g || wok != gok {
					t.Fatalf("max %d, after %d sets: get(%#x) = %d, %v; fifoMap %d, %v", max, i+1, a, g, gok, w, wok)
				}
			}
		}
		if len(got.ring) != len(want.m) || len(got.index) > 4*max+64 {
			t.Fatalf("max %d: %d entries (fifoMap %d), index of %d slots", max, len(got.ring), len(want.m), len(got.index))
		}
	}
}

// The cache in front of osThreads never hides an id osThreads forgot: a
// thread seen, pushed out by maxThreadFacts newer ones, then seen again is
// known again.
func TestSawThreadAfterEviction(t *testing.T) {
	a := New(&nettrace.Header{PointerSize: 8, QPCFrequency: 1_000_000_000}, Options{})
	a.sawThread(1)
	a.sawThread(1)
	if _, ok := a.osThreads.get(1); !ok || len(a.osThreads.order) != 1 {
		t.Fatalf("thread 1 not recorded once (%d ids)", len(a.osThreads.order))
	}
	// (The newer ones avoid thread 1's cache slot, which still holds it.)
	slot := func(tid uint64) uint64 { return (tid * 0x9e3779b97f4a7c15) >> 56 }
	for tid, n := uint64(2), 0; n < maxThreadFacts; tid++ {
		if slot(tid) != slot(1) {
			a.sawThread(tid)
			n++
		}
	}
	if _, ok := a.osThreads.get(1); ok || a.osThreads.evictions != 1 {
		t.Fatalf("thread 1 still known after %d newer ones (%d evictions)", maxThreadFacts, a.osThreads.evictions)
	}
	a.sawThread(1)
	if _, ok := a.osThreads.get(1); !ok {
		t.Fatal("thread 1 seen again but not known: the cache hid the eviction")
	}
}
