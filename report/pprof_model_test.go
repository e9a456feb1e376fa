package report

import (
	"strconv"

	"github.com/google/pprof/profile"

	"github.com/clrspy/clrspy/stacks"
)

// pprofModel converts a stack profile to github.com/google/pprof's model,
// the library's own way of building a profile: the oracle WritePprof's
// streamed encoding is tested against (TestWritePprofEqualsModel). Sample
// types
// samples/count and wall/nanoseconds, one function and location per
// frame (the module as the function's file name), and thread and sample
// kind as labels.
func pprofModel(p *stacks.Profile) *profile.Profile {
	value := "wall"
	if p.CPUTime {
		value = "cpu"
	}
	pp := &profile.Profile{
		SampleType: []*profile.ValueType{
			{Type: "samples", Unit: "count"},
			{Type: value, Unit: "nanoseconds"},
		},
		DefaultSampleType: value,
		PeriodType:        &profile.ValueType{Type: value, Unit: "nanoseconds"},
		Period:            p.PeriodNanos,
		DurationNanos:     p.DurationNanos,
	}
	if !p.Start.IsZero() {
		pp.TimeNanos = p.Start.UnixNano()
	}
	// One mapping, marked symbolized, so pprof neither looks for a binary
	// nor tries to symbolize the addresses.
	m := &profile.Mapping{ID: 1, Limit: ^uint64(0), File: "[clr]", HasFunctions: true}
	pp.Mapping = []*profile.Mapping{m}
	locs := make([]*profile.Location, len(p.Frames))
	for i := range p.Frames {
		f := &p.Frames[i]
		fn := &profile.Function{ID: uint64(i + 1), Name: f.Name, SystemName: f.Name, Filename: f.Module}
		pp.Function = append(pp.Function, fn)
		loc := &profile.Location{ID: uint64(i + 1), Mapping: m, Address: f.Address, Line: []profile.Line{{Function: fn}}}
		pp.Location = append(pp.Location, loc)
		locs[i] = loc
	}
	for i := range p.Samples {
		s := &p.Samples[i]
		t := &p.Threads[s.Thread]
		ps := &profile.Sample{
			Value:    []int64{s.Count, s.Nanos},
			Location: make([]*profile.Location, len(s.Stack)),
			Label:    map[string][]string{"thread": {t.Label()}},
			NumLabel: map[string][]int64{"thread_id": {int64(t.ID)}},
		}
		if s.Type != 0 {
			ps.Label["kind"] = []string{s.Type.String()}
		}
		for _, l := range s.Labels {
			if l.Str != "" {
				ps.Label[l.Key] = append(ps.Label[l.Key], l.Str)
			} else {
				ps.NumLabel[l.Key] = append(ps.NumLabel[l.Key], l.Num)
			}
		}
		for j, f := range s.Stack {
			ps.Location[j] = locs[f]
		}
		pp.Sample = append(pp.Sample, ps)
	}
	pp.Comments = []string{"clrspy profile: " + strconv.FormatInt(p.Total, 10) + " samples"}
	if p.Lost > 0 {
		pp.Comments = append(pp.Comments, strconv.FormatInt(p.Lost, 10)+" samples lost")
	}
	pp.Comments = append(pp.Comments, p.Notes...)
	return pp
}
