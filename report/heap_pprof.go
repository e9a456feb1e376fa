package report

import (
	"io"

	"github.com/google/pprof/profile"

	"github.com/clrspy/clrspy/heap"
	"github.com/clrspy/clrspy/stacks"
)

// WriteHeapPprof writes a pprof heap profile: sample types alloc_objects,
// alloc_space, inuse_objects and inuse_space (estimates upscaled from the
// samples), one sample per sampled object, its allocation stack with the
// object's type as a leaf pseudo-frame, as `go tool pprof` reads Go heap
// profiles. When the result does not list every followed object (the
// tracker's reservoir or record limit was reached), one sample per type and
// stack from the weighted tallies instead. durationNs is the stream's span.
func WriteHeapPprof(w io.Writer, r *heap.Result, sym *stacks.Symbols, durationNs int64) error {
	p := heapProfile(durationNs)
	funcs := map[string]*profile.Function{}
	locs := map[string]*profile.Location{}
	loc := func(name string) *profile.Location {
		if l, ok := locs[name]; ok {
			return l
		}
		f := funcs[name]
		if f == nil {
			f = &profile.Function{ID: uint64(len(p.Function) + 1), Name: name, SystemName: name}
			funcs[name] = f
			p.Function = append(p.Function, f)
		}
		l := &profile.Location{ID: uint64(len(p.Location) + 1), Line: []profile.Line{{Function: f}}}
		locs[name] = l
		p.Location = append(p.Location, l)
		return l
	}
	stackFrames := make([][]string, len(r.Stacks))
	for i, st := range r.Stacks {
		stackFrames[i] = sym.Frames(st)
	}
	sample := func(typ string, stack int, v []int64) *profile.Sample {
		ls := []*profile.Location{loc("[type] " + typ)}
		switch {
		case stack >= 0:
			for _, f := range stackFrames[stack] {
				ls = append(ls, loc(f))
			}
		case stack == heap.StackNotKept:
			ls = append(ls, loc(heap.SiteStackNotKept))
		}
		return &profile.Sample{Location: ls, Value: v, Label: map[string][]string{"type": {typ}}}
	}
	if !r.Complete() {
		for i := range r.Tallies {
			tl := &r.Tallies[i]
			p.Sample = append(p.Sample, sample(tl.Key, tl.Stack, []int64{int64(tl.EstCount + 0.5), int64(tl.EstBytes + 0.5),
				int64(tl.LiveCount + 0.5), int64(tl.LiveBytes + 0.5)}))
		}
		return p.Write(w)
	}
	for i := range r.Objects {
		o := &r.Objects[i]
		count, bytes := int64(o.EstCount+0.5), int64(o.EstBytes+0.5)
		var inCount, inBytes int64
		if o.Alive {
			inCount, inBytes = count, bytes
		}
		s := sample(o.Type, o.Stack, []int64{count, bytes, inCount, inBytes})
		if o.Size > 0 {
			s.NumLabel = map[string][]int64{"bytes": {int64(o.Size)}}
		}
		p.Sample = append(p.Sample, s)
	}
	return p.Write(w)
}

// heapProfile is an empty heap profile as Go's: alloc_objects,
// alloc_space, inuse_objects and inuse_space (the default), over
// durationNs.
func heapProfile(durationNs int64) *profile.Profile {
	return &profile.Profile{
		SampleType: []*profile.ValueType{
			{Type: "alloc_objects", Unit: "count"},
			{Type: "alloc_space", Unit: "bytes"},
			{Type: "inuse_objects", Unit: "count"},
			{Type: "inuse_space", Unit: "bytes"},
		},
		DefaultSampleType: "inuse_space",
		PeriodType:        &profile.ValueType{Type: "space", Unit: "bytes"},
		DurationNanos:     durationNs,
	}
}
