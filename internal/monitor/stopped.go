package monitor

import "sort"

// stopped accounts wall time during which the runtime was stopped, each
// instant once: suspensions are stored as the union of their intervals
// (sorted, disjoint), each with the stopped time before it, so the stopped
// time in any window is two binary searches. Intervals older than keep are
// dropped; at most maxIntervals are kept (beyond that the oldest go first
// and windows reaching before the oldest kept interval undercount).
//
// Times are nanoseconds since the session start.
type stopped struct {
	ring        []interval // circular; len is a power of two
	head, n     int
	total       int64 // stopped time of everything ever added
	keep        int64
	maxN        int
	evictedLate int // intervals evicted while still inside keep
}

type interval struct {
	start, end int64
	before     int64 // stopped time before start
}

func newStopped(keep int64, maxN int) *stopped {
	return &stopped{ring: make([]interval, 16), keep: keep, maxN: maxN}
}

func (s *stopped) at(i int) *interval { return &s.ring[(s.head+i)&(len(s.ring)-1)] }

// add records the stopped interval [start, end], merging it with the kept
// intervals it overlaps (suspensions of several threads may overlap, and
// one may end inside another). now is the event clock, for pruning.
func (s *stopped) add(start, end, now int64) {
	if end <= start {
		return
	}
	// Pop every kept interval that ends at or after start: it overlaps or
	// lies after the new one (intervals arrive by end time, so those are
	// few), and merge.
	for s.n > 0 {
		last := s.at(s.n - 1)
		if last.end < start {
			break
		}
		s.total = last.before
		start = min(start, last.start)
		end = max(end, last.end)
		s.n--
	}
	// The stopped time up to start: everything before the popped ones.
	before := s.total
	s.prune(now)
	if s.n == len(s.ring) {
		if len(s.ring) < s.maxN {
			s.grow()
		} else {
			s.head = (s.head + 1) & (len(s.ring) - 1)
			s.n--
			s.evictedLate++
		}
	}
	*s.at(s.n) = interval{start, end, before}
	s.n++
	s.total = before + end - start
}

func (s *stopped) grow() {
	r := make([]interval, 2*len(s.ring))
	for i := 0; i < s.n; i++ {
		r[i] = *s.at(i)
	}
	s.ring, s.head = r, 0
}

// prune drops intervals that ended before now-keep (and keeps at least the
// last one, whose before+length is the running total).
func (s *stopped) prune(now int64) {
	for s.n > 1 && s.at(0).end < now-s.keep {
		s.head = (s.head + 1) & (len(s.ring) - 1)
		s.n--
	}
}

// upTo is the stopped time in (-inf, t], counting completed intervals.
func (s *stopped) upTo(t int64) int64 {
	if s.n == 0 {
		return s.total
	}
	// Last kept interval that starts at or before t.
	i := sort.Search(s.n, func(i int) bool { return s.at(i).start > t }) - 1
	if i < 0 {
		return s.at(0).before
	}
	iv := s.at(i)
	return iv.before + min(t, iv.end) - iv.start
}

// upToOpen is upTo with the runtime stopped from open (the earliest
// suspension still in progress) on; open < 0: none.
func (s *stopped) upToOpen(t, open int64) int64 {
	if open < 0 || t <= open {
		return s.upTo(t)
	}
	return s.upTo(open) + t - open
}

// in is the stopped time in (t0, t1].
func (s *stopped) in(t0, t1, open int64) int64 {
	if t1 <= t0 {
		return 0
	}
	return s.upToOpen(t1, open) - s.upToOpen(t0, open)
}
