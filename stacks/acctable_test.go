package stacks

import (
	"math/rand/v2"
	"testing"
)

// The table against a Go map: keys with few distinct bits (thread 0, raw
// 0, type 0 is key 0) and enough of them to grow it eight times.
func TestAccTableMatchesMap(t *testing.T) {
	for _, conc := range []bool{false, true} {
		t.Run(map[bool]string{false: "serial", true: "concurrent"}[conc], func(t *testing.T) {
			testAccTable(t, conc)
		})
	}
}

func testAccTable(t *testing.T, conc bool) {
	tab := accTable{conc: conc}
	want := map[uint64][2]int64{}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 200_000 {
		k := accKey(int32(rng.IntN(64)), int32(rng.IntN(3000)), 0)
		if i%7 == 0 {
			k = 0
		}
		c, n := int64(1+rng.IntN(3)), int64(rng.IntN(1000))
		tab.add(k, c, n)
		w := want[k]
		want[k] = [2]int64{w[0] + c, w[1] + n}
	}
	if tab.len() != len(want) {
		t.Fatalf("%d accumulators, want %d", tab.len(), len(want))
	}
	got := tab.sorted()
	for i, a := range got {
		if i > 0 && got[i-1].key >= a.key {
			t.Fatalf("not sorted at %d: %#x after %#x", i, a.key, got[i-1].key)
		}
		if w := want[a.key]; a.count != w[0] || a.nanos != w[1] {
			t.Fatalf("key %#x: %d/%d, want %d/%d", a.key, a.count, a.nanos, w[0], w[1])
		}
	}
	if got[0].key != 0 || got[0].thread() != 0 || got[0].raw() != 0 {
		t.Fatalf("first accumulator %#x, want key 0", got[0].key)
	}
	last := accKey(1<<27-1, 1<<31-1, 15)
	tab.add(last, 1, 2)
	all := tab.sorted()
	if a := all[len(all)-1]; a.key != last || a.thread() != 1<<27-1 || a.raw() != 1<<31-1 || a.typ() != 15 {
		t.Fatalf("largest key unpacked as thread %d raw %d type %d", a.thread(), a.raw(), a.typ())
	}
}
