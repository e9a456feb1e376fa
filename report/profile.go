package report

// Stack profiles: folded stacks here; pprof, speedscope and HTML flame
// graphs in the other profile*.go files.

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strconv"

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
