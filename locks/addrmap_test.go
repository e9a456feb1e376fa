package locks

import (
	"math/rand/v2"
	"testing"
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
