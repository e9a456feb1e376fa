package analysis

import (
	"slices"
	"testing"
)

// TestHistogramRules: a value equal to a bound counts in the bucket the
// bound closes (Prometheus' le) unless LowerClosed ([lo, hi), clrspy gc's
// and clrspy locks' tables); values above every bound in the last one.
func TestHistogramRules(t *testing.T) {
	bounds := []int64{10, 100}
	le, lc := NewHistogram(bounds, false), NewHistogram(bounds, true)
	for _, v := range []int64{0, 10, 11, 100, 101} {
		le.Add(v)
		lc.Add(v)
	}
	if !slices.Equal(le.Counts, []uint64{2, 2, 1}) || !slices.Equal(lc.Counts, []uint64{1, 2, 2}) || le.Count != 5 || lc.SumNanos != 222 {
		t.Errorf("le %+v, lower-closed %+v", le, lc)
	}
	c := le.Clone()
	c.Add(5)
	if le.Counts[0] != 2 || c.Counts[0] != 3 {
		t.Errorf("clone shares counts")
	}
	if lo, hi := le.Bucket(0); lo != 0 || hi != 10 {
		t.Errorf("bucket 0: %d %d", lo, hi)
	}
	if lo, hi := le.Bucket(2); lo != 100 || hi != 0 {
		t.Errorf("bucket 2: %d %d", lo, hi)
	}
	if s := Steps125(100_000, 10_000_000_000); len(s) != 16 || s[0] != 100_000 || s[15] != 10_000_000_000 {
		t.Errorf("steps %v", s)
	}
}
