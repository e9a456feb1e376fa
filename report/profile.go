package report

// Stack profiles: folded stacks here; pprof, speedscope and HTML flame
// graphs in the other profile*.go files.

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/clrspy/clrspy/stacks"
)

// Weight selects which value of a stack profile a single-valued format
// (folded, flame graph) shows.
type Weight uint8

// Weights.
const (
	WeightSamples Weight = iota // sample counts
	WeightWall                  // thread time in nanoseconds
)

// ParseWeight maps a --weight value.
func ParseWeight(s string) (Weight, error) {
	switch s {
	case "samples", "count":
		return WeightSamples, nil
	case "wall", "time", "nanoseconds":
		return WeightWall, nil
	}
	return 0, fmt.Errorf("unknown --weight %q (want samples or wall)", s)
}

func (w Weight) of(s *stacks.Sample) int64 {
	if w == WeightWall {
		return s.Nanos
	}
	return s.Count
}

// FoldedOptions control WriteFolded.
type FoldedOptions struct {
	Weight Weight
	// Threads adds a root frame per thread ("thread 1234").
	Threads bool
}

// WriteFolded writes Brendan Gregg's collapsed stacks: one line per
// distinct stack, frames root first joined by ';', a space and the weight;
// lines in byte order (the order dotnetdiag's goldens use).
func WriteFolded(w io.Writer, p *stacks.Profile, o FoldedOptions) error {
	sums := make(map[string]int64)
	for i := range p.Samples {
		s := &p.Samples[i]
		line := p.Folded(s, ";")
		if o.Threads {
			t := p.Threads[s.Thread].Label()
			if line == "" {
				line = t
			} else {
				line = t + ";" + line
			}
		}
		sums[line] += o.Weight.of(s)
	}
	lines := make([]string, 0, len(sums))
	for l := range sums {
		lines = append(lines, l)
	}
	sort.Strings(lines)
	bw := bufio.NewWriter(w)
	var buf []byte
	for _, l := range lines {
		buf = append(buf[:0], l...)
		buf = append(buf, ' ')
		buf = strconv.AppendInt(buf, sums[l], 10)
		buf = append(buf, '\n')
		if _, err := bw.Write(buf); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// samplerName says which sampler took a profile's samples and what they
// measure.
func samplerName(p *stacks.Profile, live bool) string {
	switch {
	case p.CPUTime:
		return "perf sampler (perf_event: on-CPU time; managed, native and kernel frames)"
	case live:
		return "EventPipe sampler (the runtime's: managed threads' wall clock, every 1 ms)"
	}
	return "the trace's samples (the runtime's EventPipe sampler: managed threads' wall clock)"
}

// ProfileSummary is the line `profile` ends with on stderr: the sampler,
// the samples and what was lost or folded of them, and the file written
// (out, "" or "-": none).
func ProfileSummary(p *stacks.Profile, out string, live bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d samples (%d managed, %d external", samplerName(p, live), p.Total, p.Managed, p.External)
	if p.Errors > 0 {
		fmt.Fprintf(&b, ", %d error", p.Errors)
	}
	fmt.Fprintf(&b, ") on %d threads over %v; %d method bodies", len(p.Threads),
		time.Duration(p.DurationNanos).Round(time.Millisecond), p.Methods)
	if p.Dropped > 0 {
		fmt.Fprintf(&b, "; %d dropped", p.Dropped)
	}
	if p.Unresolved > 0 {
		fmt.Fprintf(&b, "; %d unresolved frames", p.Unresolved)
	}
	if p.Truncated > 0 {
		fmt.Fprintf(&b, "; %d truncated stacks", p.Truncated)
	}
	if p.Lost > 0 {
		fmt.Fprintf(&b, "; %d samples lost (the kernel's ring buffer was full)", p.Lost)
	}
	if p.OffCPU {
		var n, ns int64
		for i := range p.Samples {
			if p.Samples[i].OffCPU {
				n += p.Samples[i].Count
				ns += p.Samples[i].Nanos
			}
		}
		fmt.Fprintf(&b, "; off the CPU: %d switch-outs, %v", n, time.Duration(ns).Round(time.Millisecond))
	}
	if p.FoldedThreads > 0 {
		fmt.Fprintf(&b, "; %d threads past the first %d folded into %s", p.FoldedThreads, stacks.DefaultMaxThreads, stacks.FoldedThreadName)
	}
	if out != "" && out != "-" {
		fmt.Fprintf(&b, "; wrote %s", filepath.Clean(out))
	}
	return b.String()
}
