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
// profiles. durationNs is the stream's span.
func WriteHeapPprof(w io.Writer, r *heap.Result, sym *stacks.Symbols, durationNs int64) error {
	p := &profile.Profile{
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
	for i := range r.Objects {
		o := &r.Objects[i]
		ls := []*profile.Location{loc("[type] " + o.Type)}
		if o.Stack >= 0 {
			for _, f := range stackFrames[o.Stack] {
				ls = append(ls, loc(f))
			}
		}
		count, bytes := int64(o.EstCount+0.5), int64(o.EstBytes+0.5)
		var inCount, inBytes int64
		if o.Alive {
			inCount, inBytes = count, bytes
		}
		s := &profile.Sample{Location: ls, Value: []int64{count, bytes, inCount, inBytes},
			Label: map[string][]string{"type": {o.Type}}}
		if o.Size > 0 {
			s.NumLabel = map[string][]int64{"bytes": {int64(o.Size)}}
		}
		p.Sample = append(p.Sample, s)
	}
	return p.Write(w)
}
