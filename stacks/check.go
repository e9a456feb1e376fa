package stacks

import "fmt"

// CheckValid reports the first invariant p breaks, nil when it breaks
// none: no negative time or count; every sample is managed, external or
// an error; the threads' samples add up to the managed and external ones;
// the aggregated samples of a runtime-sampler profile count each sample
// kept once (dotnetdiag's semantics credit fewer); thread and frame
// indices in range. Every fixture test and fuzz target of the package
// runs it.
func (p *Profile) CheckValid() error {
	if p.DurationNanos < 0 || p.Total < 0 || p.Managed < 0 || p.External < 0 || p.Errors < 0 || p.Dropped < 0 ||
		p.Unresolved < 0 || p.Truncated < 0 || p.Lost < 0 || p.FoldedThreads < 0 {
		return fmt.Errorf("a negative count: duration %d ns, total %d, managed %d, external %d, errors %d, dropped %d",
			p.DurationNanos, p.Total, p.Managed, p.External, p.Errors, p.Dropped)
	}
	if kinds := p.Managed + p.External + p.Errors; kinds > p.Total || p.Total > kinds+p.Dropped {
		return fmt.Errorf("%d samples: %d managed, %d external, %d errors, %d dropped", p.Total, p.Managed, p.External, p.Errors, p.Dropped)
	}
	var samples, external int64
	for _, t := range p.Threads {
		if t.Samples < 0 || t.External < 0 || t.External > t.Samples {
			return fmt.Errorf("thread %d: %d samples, %d external", t.ID, t.Samples, t.External)
		}
		samples += t.Samples
		external += t.External
	}
	runtimeSampler := !p.CPUTime && !p.OffCPU
	if runtimeSampler && (samples != p.Managed+p.External || external != p.External) {
		return fmt.Errorf("%d managed and %d external samples; the threads add to %d, %d external", p.Managed, p.External, samples, external)
	}
	var count int64
	for i, s := range p.Samples {
		if s.Count <= 0 || s.Nanos < 0 || s.Thread < 0 || s.Thread >= max(len(p.Threads), 1) {
			return fmt.Errorf("sample %d: %d samples, %d ns, thread %d of %d", i, s.Count, s.Nanos, s.Thread, len(p.Threads))
		}
		for _, f := range s.Stack {
			if f < 0 || int(f) >= len(p.Frames) {
				return fmt.Errorf("sample %d: frame %d of %d", i, f, len(p.Frames))
			}
		}
		if !s.OffCPU {
			count += s.Count
		}
	}
	if runtimeSampler && len(p.Samples) > 0 {
		kept := p.Managed + p.External - p.Dropped
		if p.Compat == CompatNone && count != kept || count > kept {
			return fmt.Errorf("%d samples kept (%d managed, %d external, %d dropped); the aggregates count %d", kept, p.Managed, p.External, p.Dropped, count)
		}
	}
	return nil
}
