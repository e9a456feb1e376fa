package report

import (
	"io"
	"time"

	"github.com/google/pprof/profile"

	"github.com/clrspy/clrspy/locks"
)

// LocksProfile builds a pprof contention profile in the form Go's own
// mutex/block profiles use: sample types contentions/count and
// delay/nanoseconds, one sample per (waiting stack, lock, thread), with the
// lock, its object type and the waiting thread as labels so that
// `go tool pprof -tagfocus` can select them. start and span place the
// profile in time.
func LocksProfile(r *locks.Result, start time.Time, span time.Duration) *profile.Profile {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{
			{Type: "contentions", Unit: "count"},
			{Type: "delay", Unit: "nanoseconds"},
		},
		DefaultSampleType: "delay",
		PeriodType:        &profile.ValueType{Type: "contentions", Unit: "count"},
		Period:            1,
		TimeNanos:         start.UnixNano(),
		DurationNanos:     int64(span),
	}
	types := map[uint64]string{}
	for _, l := range r.Locks {
		types[l.ID] = l.ObjectType
	}
	locs := newPprofLocs(p)
	for _, s := range r.Samples {
		st := r.Stacks[s.Stack]
		sl := locs.stack(st.IPs, st.Frames, st.Modules, "[no stack]", nil)
		lbl := map[string][]string{"lock": {lockName(s.LockID)}}
		if t := types[s.LockID]; t != "" {
			lbl["object_type"] = []string{t}
		}
		p.Sample = append(p.Sample, &profile.Sample{
			Location: sl,
			Value:    []int64{s.Contentions, s.DelayNs},
			Label:    lbl,
			NumLabel: map[string][]int64{"thread": {int64(s.Thread)}},
		})
	}
	return p
}

// WriteLocksPprof writes the contention profile as gzipped protobuf.
func WriteLocksPprof(w io.Writer, r *locks.Result, start time.Time, span time.Duration) error {
	return LocksProfile(r, start, span).Write(w)
}
