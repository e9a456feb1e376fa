package metrics

import "github.com/clrspy/clrspy/triage"

// The memory families: the process's RSS split by package memory (the
// kinds of `clrspy memory`), and its memory cgroup's limit and usage.
var (
	famProcessMemory = &Family{Name: "clrspy_process_memory_bytes", OTel: "clrspy.process.memory", OTelUnit: "By", Kind: Gauge,
		Help:   "The process's resident memory (RSS) split as clrspy memory splits it, by kind: gc_heap (the GC's regions), gc_bookkeeping, jit_code, loader (loader heaps), native_heap (malloc), stacks, images (mapped files), other (anonymous memory nothing claims); the kinds add up to the RSS. Read from /proc/PID/smaps every serve --memory-interval (docs/memory.md).",
		Labels: target(Label{"kind", "clrspy.memory.kind"})}
	famCgroupLimit = &Family{Name: "clrspy_cgroup_memory_limit_bytes", OTel: "clrspy.cgroup.memory.limit", OTelUnit: "By", Kind: Gauge,
		Help:   "The memory limit that applies to the process's cgroup (the smallest memory.max of it and its ancestors; v1: memory.limit_in_bytes); no series without a limit.",
		Labels: target()}
	famCgroupUsage = &Family{Name: "clrspy_cgroup_memory_usage_bytes", OTel: "clrspy.cgroup.memory.usage", OTelUnit: "By", Kind: Gauge,
		Help:   "The memory the cgroup that sets the process's limit uses (memory.current; v1: memory.usage_in_bytes; the process's own cgroup's without a limit): every process in it, page cache included.",
		Labels: target()}
	famCgroupHeadroom = &Family{Name: "clrspy_cgroup_memory_headroom_bytes", OTel: "clrspy.cgroup.memory.headroom", OTelUnit: "By", Kind: Gauge,
		Help:   "The cgroup's memory limit less its usage (0 at or over it); no series without a limit.",
		Labels: target()}
	famCgroupOOM = &Family{Name: "clrspy_cgroup_memory_oom_kills_total", OTel: "clrspy.cgroup.memory.oom_kills", OTelUnit: "{kill}", Kind: Counter,
		Help:   "Processes the kernel's OOM killer killed in the cgroup that sets the limit (memory.events oom_kill; v1: memory.oom_control), where the kernel counts them.",
		Labels: target()}
)

// The memory families come after the others in the exposition (as the
// thread pool's: a variable's initializer, before families.go's init).
var _ = func() bool {
	ownFamilies = append(ownFamilies, famProcessMemory, famCgroupLimit, famCgroupUsage, famCgroupHeadroom, famCgroupOOM)
	return true
}()

// walkMemory exports the latest split and the cgroup's figures.
func walkMemory(t *Target, lv func(...string) []string, s sink) {
	if n := len(t.Memory); n > 0 {
		sp := &t.Memory[n-1].Split
		for _, p := range sp.Parts {
			s.value(famProcessMemory, float64(p.Bytes), lv(string(p.Kind)))
		}
	}
	cg := t.Cgroup
	if cg == nil {
		return
	}
	if cg.Limit > 0 {
		s.value(famCgroupLimit, float64(cg.Limit), lv())
		s.value(famCgroupHeadroom, float64(cg.Headroom()), lv())
	}
	s.value(famCgroupUsage, float64(cg.Usage), lv())
	if cg.OOMKills >= 0 {
		s.value(famCgroupOOM, float64(cg.OOMKills), lv())
	}
}

// splitFacts are triage's facts of the target's splits (nil: none read).
func splitFacts(t *Target) *triage.SplitFacts {
	var limit, usage uint64
	if t.Cgroup != nil {
		limit, usage = t.Cgroup.Limit, t.Cgroup.Usage
	}
	return triage.SplitOf(t.Memory, limit, usage)
}
