package gcpause

import (
	"math/bits"
	"slices"
)

// dist holds the pause lengths of one series for percentiles in bounded
// memory: the exact values while there are at most exactCap of them (every
// file in practice, so results there are exact), then a log-linear
// histogram with 512 sub-buckets per power of two (relative error under
// 0.2 %), so a live session of hours keeps a few hundred KB.
type dist struct {
	exact  []int64
	counts []uint32 // histogram, allocated when exact overflows
	n      int
}

const (
	exactCap = 1 << 14
	subBits  = 9 // 512 sub-buckets per power of two
	subCount = 1 << subBits
)

// bucket maps v ≥ 0 to its histogram index: values below 512 ns have
// their own bucket; above, 512 per power of two.
func bucket(v int64) int {
	if v < subCount {
		return int(max(v, 0))
	}
	e := bits.Len64(uint64(v)) - subBits // ≥ 1
	return e*subCount + int(v>>(e-1)) - subCount
}

// lowest is the smallest value of bucket i (the inverse of bucket).
func lowest(i int) int64 {
	if i < subCount {
		return int64(i)
	}
	e := i / subCount
	return int64(i%subCount+subCount) << (e - 1)
}

func (d *dist) add(v int64) {
	d.n++
	if d.counts == nil {
		if len(d.exact) < exactCap {
			d.exact = append(d.exact, v)
			return
		}
		d.counts = make([]uint32, bucket(1<<62)+1)
		for _, x := range d.exact {
			d.counts[bucket(x)]++
		}
		d.exact = nil
	}
	d.counts[bucket(v)]++
}

// percentiles returns the nearest-rank percentiles ps of the values.
func (d *dist) percentiles(ps ...float64) []int64 {
	out := make([]int64, len(ps))
	if d.n == 0 {
		return out
	}
	if d.counts == nil {
		v := slices.Clone(d.exact)
		slices.Sort(v)
		for i, p := range ps {
			out[i] = percentile(v, p)
		}
		return out
	}
	for i, p := range ps {
		rank := rankOf(p, d.n)
		seen := 0
		for b, c := range d.counts {
			seen += int(c)
			if seen > rank {
				out[i] = lowest(b)
				break
			}
		}
	}
	return out
}
