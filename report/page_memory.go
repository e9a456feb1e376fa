package report

import (
	"strings"

	"github.com/clrspy/clrspy/memory"
	"github.com/clrspy/clrspy/stacks"
)

// PageMemory is the report page's memory section: the process's resident
// memory split by part (package memory) at each sample, drawn as a stacked
// area chart on the page's clock. Columnar: Bytes[k][i] is part Kinds[k]
// at sample i, and the parts of a sample add up to its RSS.
type PageMemory struct {
	Kinds  []string `json:"kinds"`
	Labels []string `json:"labels"`
	// TMs are the samples' times in ms since the session start.
	TMs   []float64  `json:"t_ms"`
	Bytes [][]uint64 `json:"bytes"`
	Rss   []uint64   `json:"rss_bytes"`
	// LimitBytes is the memory cgroup's limit (0: none), UsageBytes its
	// usage at the end.
	LimitBytes uint64 `json:"limit_bytes"`
	UsageBytes uint64 `json:"usage_bytes"`
	// Judgement is clrspy memory's ("RSS +50.0 MiB in 10 s: native heap
	// grows ...").
	Judgement string `json:"judgement"`
}

// PageMemoryOf is the section of the samples ss (oldest first), whose
// AtNs count from offsetNs after the session start, and of the cgroup's
// limit and usage at the end (limit 0: none); nil without a sample.
func PageMemoryOf(ss []memory.Sample, offsetNs int64, limit, usage uint64) *PageMemory {
	if len(ss) == 0 {
		return nil
	}
	m := &PageMemory{TMs: make([]float64, len(ss)), Rss: make([]uint64, len(ss)), Bytes: make([][]uint64, len(memory.Kinds)),
		LimitBytes: limit, UsageBytes: usage, Judgement: memory.Judge(ss, limit, usage)}
	for k, kind := range memory.Kinds {
		m.Kinds = append(m.Kinds, string(kind))
		m.Labels = append(m.Labels, kind.Label())
		m.Bytes[k] = make([]uint64, len(ss))
	}
	for i := range ss {
		s := &ss[i]
		m.TMs[i] = round3(ms(offsetNs + s.AtNs))
		m.Rss[i] = s.Split.Rss
		for k, kind := range memory.Kinds {
			m.Bytes[k][i] = s.Split.Bytes(kind)
		}
	}
	return m
}

// Labels of memory --native's flame graph views.
const (
	LabelNativeOutstanding = "native memory outstanding"
	LabelNativeAllocated   = "native memory allocated"
)

// NativeFlameViews are memory --native's estimates as flame graph views,
// a stack's width its bytes in KiB (rounded up, so that no sampled stack
// vanishes): the outstanding bytes at the end, then those allocated over
// the run. Frames are named as the JSON names them, leaf first; a name
// with an argument list is a managed method's.
func NativeFlameViews(n *MemoryNativeJSON) []FlameView {
	if n == nil {
		return nil
	}
	var views []FlameView
	for _, v := range []struct {
		label string
		l     []MemoryNativeStackJSON
	}{{LabelNativeOutstanding, n.Outstanding}, {LabelNativeAllocated, n.Allocated}} {
		p := &stacks.Profile{} // no threads: the estimates are by stack alone
		index := map[string]int32{}
		for _, s := range v.l {
			if s.Bytes <= 0 {
				continue
			}
			st := make([]int32, 0, len(s.Frames))
			for _, name := range s.Frames {
				i, ok := index[name]
				if !ok {
					i = int32(len(p.Frames))
					index[name] = i
					kind := stacks.KindNative
					if strings.Contains(name, "(") {
						kind = stacks.KindManaged
					}
					p.Frames = append(p.Frames, stacks.Frame{Name: name, Kind: kind})
				}
				st = append(st, i)
			}
			kib := (s.Bytes + 1023) / 1024
			p.Samples = append(p.Samples, stacks.Sample{Stack: st, Count: kib})
			p.Total += kib
		}
		if p.Total > 0 {
			views = append(views, FlameView{Label: v.label, Profile: p, Unit: "KiB"})
		}
	}
	return views
}
