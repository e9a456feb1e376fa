package tui

import (
	"fmt"

	"github.com/clrspy/clrspy/internal/procfs"
	"github.com/clrspy/clrspy/memory"
)

// Memory is the header's memory line: the process's RSS split by package
// memory (the GC heap, the native heap, the rest), the part that grows
// over the recent readings, and its cgroup's limit and headroom.
type Memory struct {
	RssBytes        uint64 `json:"rss_bytes"`
	GCHeapBytes     uint64 `json:"gc_heap_bytes"`
	NativeHeapBytes uint64 `json:"native_heap_bytes"`
	// OtherBytes is the rest of the RSS: the runtime's code and loader
	// heaps, stacks, mapped images, other anonymous memory.
	OtherBytes uint64 `json:"other_bytes"`
	// CgroupLimitBytes is the cgroup's memory limit (0: none),
	// CgroupUsageBytes its usage.
	CgroupLimitBytes uint64 `json:"cgroup_limit_bytes,omitempty"`
	CgroupUsageBytes uint64 `json:"cgroup_usage_bytes,omitempty"`
	// CgroupHeadroomBytes is what is left under the limit (0 without a
	// limit, or at it).
	CgroupHeadroomBytes uint64 `json:"cgroup_headroom_bytes,omitempty"`
	// GrowingKind is the part that grew most over the readings, past the
	// steady band (memory.Top: clrspy memory's judgement; "": none), and
	// GrowingBytesPerSec its least-squares slope.
	GrowingKind        string  `json:"growing_kind,omitempty"`
	GrowingBytesPerSec float64 `json:"growing_bytes_per_sec,omitempty"`
}

// SetMemory sets the memory line from the recent readings of the split ss
// (oldest first: the last is shown, the part that grows over them named)
// and the latest cgroup reading (nil: none); no readings, no line.
func (m *Model) SetMemory(ss []memory.Sample, cg *procfs.CgroupMemory) {
	if len(ss) == 0 {
		m.mem = nil
		return
	}
	sp := &ss[len(ss)-1].Split
	gc, native := sp.Bytes(memory.GCHeap), sp.Bytes(memory.NativeHeap)
	v := &Memory{RssBytes: sp.Rss, GCHeapBytes: gc, NativeHeapBytes: native, OtherBytes: sp.Rss - gc - native}
	if cg != nil && cg.Limit > 0 {
		v.CgroupLimitBytes, v.CgroupUsageBytes, v.CgroupHeadroomBytes = cg.Limit, cg.Usage, cg.Headroom()
	}
	if g, ok := memory.Top(ss); ok {
		v.GrowingKind, v.GrowingBytesPerSec = string(g.Kind), g.PerSec
	}
	m.mem = v
}

// memoryLine renders the memory line ("" without one).
func (m *Model) memoryLine(sc *Screen, W int) []string {
	v := sc.Memory
	if v == nil {
		return nil
	}
	items := []string{m.st.bold.Render("memory") + " RSS " + fmtBytes(float64(v.RssBytes)),
		"GC heap " + fmtBytes(float64(v.GCHeapBytes)), "native " + fmtBytes(float64(v.NativeHeapBytes)),
		"other " + fmtBytes(float64(v.OtherBytes))}
	if v.GrowingKind != "" {
		items = append(items, m.st.info.Render(memory.Kind(v.GrowingKind).Label()+" grows "+fmtBytes(v.GrowingBytesPerSec)+"/s"))
	}
	if v.CgroupLimitBytes > 0 {
		pct := memory.LimitPct(v.CgroupLimitBytes, v.CgroupUsageBytes)
		s := fmt.Sprintf("cgroup %s of %s (%.0f %%), headroom %s", fmtBytes(float64(v.CgroupUsageBytes)), fmtBytes(float64(v.CgroupLimitBytes)), pct,
			fmtBytes(float64(v.CgroupHeadroomBytes)))
		switch {
		case pct >= 95:
			s = m.st.warn.Render(s)
		case pct >= 80:
			s = m.st.info.Render(s)
		}
		items = append(items, s)
	}
	return flow([][]string{items}, W)
}
