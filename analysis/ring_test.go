package analysis

import (
	"slices"
	"testing"
)

// TestRing: a ring keeps the latest Max values, oldest first, while it
// grows and once it wraps, and Push hands back the value's slot.
func TestRing(t *testing.T) {
	r := NewRing[int](3)
	if got := r.Slice(); len(got) != 0 {
		t.Fatalf("empty ring %v", got)
	}
	for i, want := range [][]int{{1}, {1, 2}, {1, 2, 3}, {2, 3, 4}, {3, 4, 5}, {4, 5, 6}, {5, 6, 7}} {
		*r.Push(0) = i + 1
		if got := r.Slice(); !slices.Equal(got, want) || r.Len() != len(want) || *r.At(0) != want[0] || *r.Back(0) != i+1 {
			t.Errorf("after %d: %v (len %d, oldest %d, newest %d), want %v", i+1, got, r.Len(), *r.At(0), *r.Back(0), want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { r.Push(8) }); n != 0 {
		t.Errorf("%v allocations per push once full", n)
	}
}
