package gcpause

import "slices"

// span is one stop, [start, end) in nanoseconds since the session start.
type span struct{ start, end int64 }

// spanSet measures the union of spans: stopped wall time counted once when
// the stops of different GCs overlap (a foreground GC suspending while a
// background GC's stop is still on). Spans may arrive out of order (a
// background GC's stops are added when it finishes, after the foreground
// GCs that ran meanwhile), so the recent ones are kept merged and sorted;
// prune drops those no later span can reach.
type spanSet struct {
	spans []span // disjoint, sorted by start
	total int64
}

// add adds s and returns the time it covered that no earlier span did.
func (u *spanSet) add(s span) int64 {
	if s.end <= s.start {
		return 0
	}
	// First span that ends at or after s starts: it and the ones after it
	// that start before s ends overlap s.
	i, _ := slices.BinarySearchFunc(u.spans, s.start, func(x span, t int64) int {
		if x.end < t {
			return -1
		}
		return 1
	})
	j := i
	merged, covered := s, int64(0)
	for ; j < len(u.spans) && u.spans[j].start <= s.end; j++ {
		x := u.spans[j]
		covered += min(x.end, s.end) - max(x.start, s.start)
		merged.start = min(merged.start, x.start)
		merged.end = max(merged.end, x.end)
	}
	u.spans = slices.Replace(u.spans, i, j, merged)
	added := s.end - s.start - covered
	u.total += added
	return added
}

// prune forgets the spans that end before t: spans added later all start
// at or after t.
func (u *spanSet) prune(t int64) {
	i := 0
	for i < len(u.spans) && u.spans[i].end < t {
		i++
	}
	if i > 0 {
		u.spans = append(u.spans[:0], u.spans[i:]...)
	}
}
