package report

import (
	"bufio"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"
)

// memory --native's profiles: its outstanding and allocated estimates by
// stack, as the JSON gives them (rounded to whole bytes and allocations),
// so that a stack's values in the profile are the JSON's.

// nativeStack is one stack of the profile: the JSON's values for it in
// either list (zero in a list that does not have it).
type nativeStack struct {
	frames                                         []string
	allocCount, allocBytes, inuseCount, inuseBytes int64
}

// nativeStacks merges n's two lists by frames, in the order of the
// outstanding bytes, then the allocated, then the frames.
func nativeStacks(n *MemoryNativeJSON) []*nativeStack {
	idx := map[string]*nativeStack{}
	var list []*nativeStack
	get := func(frames []string) *nativeStack {
		k := strings.Join(frames, "\x00")
		s := idx[k]
		if s == nil {
			s = &nativeStack{frames: frames}
			idx[k] = s
			list = append(list, s)
		}
		return s
	}
	for _, s := range n.Outstanding {
		e := get(s.Frames)
		e.inuseBytes += s.Bytes
		e.inuseCount += s.Count
	}
	for _, s := range n.Allocated {
		e := get(s.Frames)
		e.allocBytes += s.Bytes
		e.allocCount += s.Count
	}
	sort.SliceStable(list, func(i, j int) bool {
		a, b := list[i], list[j]
		if a.inuseBytes != b.inuseBytes {
			return a.inuseBytes > b.inuseBytes
		}
		if a.allocBytes != b.allocBytes {
			return a.allocBytes > b.allocBytes
		}
		return strings.Join(a.frames, "\x00") < strings.Join(b.frames, "\x00")
	})
	return list
}

// MemoryNativeProfile is memory --native's estimates as a pprof heap
// profile, in the form of Go's: sample types alloc_objects, alloc_space
// (allocated over the run), inuse_objects and inuse_space (still
// allocated at the end; the default), one sample per stack, one location
// per frame name, leaf first, managed and native alike. The values are
// the unbiased estimates (each sampled block weighed by 1/p), not the
// samples. durationNs is the span the probes were on; notes go in as
// comments (why the estimates are partial).
func MemoryNativeProfile(n *MemoryNativeJSON, durationNs int64, notes []string) *profile.Profile {
	p := heapProfile(durationNs)
	p.Period = n.SampleBytes
	p.Comments = []string{"clrspy memory --native: native allocations sampled every " + strconv.FormatInt(n.SampleBytes, 10) +
		" bytes on average; values are estimates (each sample weighed by 1/p)"}
	p.Comments = append(p.Comments, notes...)
	locs := newPprofLocs(p)
	for _, s := range nativeStacks(n) {
		p.Sample = append(p.Sample, &profile.Sample{
			Location: locs.stack(nil, s.frames, nil, "[no stack]", nil),
			Value:    []int64{s.allocCount, s.allocBytes, s.inuseCount, s.inuseBytes},
		})
	}
	return p
}

// WriteMemoryNativePprof writes MemoryNativeProfile as gzipped protobuf.
func WriteMemoryNativePprof(w io.Writer, n *MemoryNativeJSON, durationNs int64, notes []string) error {
	return MemoryNativeProfile(n, durationNs, notes).Write(w)
}

// WriteMemoryNativeFolded writes the outstanding estimates as collapsed
// stacks: one line per stack with bytes still allocated, frames root
// first joined by ';', a space and the bytes; lines in byte order.
// A ';' inside a frame's name becomes ':' (it would split the frame).
func WriteMemoryNativeFolded(w io.Writer, n *MemoryNativeJSON) error {
	sums := map[string]int64{}
	for _, s := range nativeStacks(n) {
		if s.inuseBytes <= 0 {
			continue
		}
		fs := make([]string, 0, len(s.frames))
		for i := len(s.frames) - 1; i >= 0; i-- {
			fs = append(fs, strings.ReplaceAll(s.frames[i], ";", ":"))
		}
		if len(fs) == 0 {
			fs = append(fs, "[no stack]")
		}
		sums[strings.Join(fs, ";")] += s.inuseBytes
	}
	lines := make([]string, 0, len(sums))
	for l := range sums {
		lines = append(lines, l)
	}
	sort.Strings(lines)
	bw := bufio.NewWriter(w)
	for _, l := range lines {
		bw.WriteString(l)
		bw.WriteByte(' ')
		bw.WriteString(strconv.FormatInt(sums[l], 10))
		bw.WriteByte('\n')
	}
	return bw.Flush()
}
