package tui

import (
	"fmt"

	"github.com/clrspy/clrspy/internal/procfs"
	"github.com/clrspy/clrspy/memory"
)

// Memory is the header's memory line: the process's RSS split by package
// memory (the GC heap, the native heap, the rest) and its cgroup's limit.
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
}

// SetMemory sets the memory line from the latest split and cgroup reading
// (sp nil: no line).
func (m *Model) SetMemory(sp *memory.Split, cg *procfs.CgroupMemory) {
	if sp == nil {
		m.mem = nil
		return
	}
	gc, native := sp.Bytes(memory.GCHeap), sp.Bytes(memory.NativeHeap)
	v := &Memory{RssBytes: sp.Rss, GCHeapBytes: gc, NativeHeapBytes: native, OtherBytes: sp.Rss - gc - native}
	if cg != nil && cg.Limit > 0 {
		v.CgroupLimitBytes, v.CgroupUsageBytes = cg.Limit, cg.Usage
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
	if v.CgroupLimitBytes > 0 {
		pct := memory.LimitPct(v.CgroupLimitBytes, v.CgroupUsageBytes)
		s := fmt.Sprintf("cgroup %s of %s (%.0f %%)", fmtBytes(float64(v.CgroupUsageBytes)), fmtBytes(float64(v.CgroupLimitBytes)), pct)
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
