package requests

import "math"

// sketch is a logarithmic histogram of durations: bucket i holds values in
// [gamma^i, gamma^(i+1)) ns, so any quantile it returns is within 1 % of
// the true value. Its size is bounded by the range of int64 (about 2200
// buckets), whatever the number of values.
type sketch struct {
	counts []uint64 // by bucket index
	zero   uint64   // values below 1 ns
	n      uint64
	max    int64
}

const gamma = 1.02 // bucket width: (gamma-1)/(gamma+1) < 1 % from the midpoint

var logGamma = math.Log(gamma)

func bucketOf(v int64) int { return int(math.Log(float64(v)) / logGamma) }

func (s *sketch) add(v int64) {
	s.n++
	s.max = max(s.max, v)
	if v < 1 {
		s.zero++
		return
	}
	i := bucketOf(v)
	if i >= len(s.counts) {
		s.counts = append(s.counts, make([]uint64, i+1-len(s.counts))...)
	}
	s.counts[i]++
}

// quantile is the q-quantile (0..1): the midpoint of the bucket that holds
// the rank, never above the maximum; 0 without values.
func (s *sketch) quantile(q float64) int64 {
	if s.n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(s.n)))
	rank = max(rank, 1)
	seen := s.zero
	if seen >= rank {
		return 0
	}
	for i, c := range s.counts {
		seen += c
		if seen >= rank {
			lo := math.Pow(gamma, float64(i))
			v := int64(math.Round(lo * 2 * gamma / (1 + gamma)))
			return min(v, s.max)
		}
	}
	return s.max
}
