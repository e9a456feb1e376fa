package triage

// Threshold is one row of the thresholds table: a figure of one area, the
// value from which it is a warning and from which it is critical. A figure
// below Warning is reported as info (with the area's figures) when no other
// figure of the area is worse.
type Threshold struct {
	Key      string  // "gc.pause_pct"
	Area     Area    // the area its finding belongs to
	Unit     string  // the figure's unit, as docs/TRIAGE.md writes it
	Warning  float64 // from this value on: warning
	Critical float64 // from this value on: critical
}

// Thresholds is the one table of the thresholds the findings use.
// docs/TRIAGE.md lists the same rows with the reason for each value (a
// test compares them); change both together.
var Thresholds = []Threshold{
	{"gc.pause_pct", AreaGC, "% of wall time", 5, 20},
	{"gc.max_pause_ms", AreaGC, "ms", 200, 1000},
	{"gc.gen2_blocking_per_min", AreaGC, "GCs/min", 2, 30},
	{"gc.induced_per_min", AreaGC, "GCs/min", 1, 20},
	{"gc.loh_triggered_per_min", AreaGC, "GCs/min", 6, 60},
	{"gc.max_suspend_ms", AreaGC, "ms", 50, 500},
	{"gc.alloc_mb_per_sec", AreaGC, "MB/s", 500, 4000},
	{"gc.other_suspension_pct", AreaGC, "% of wall time", 2, 10},
	{"gc.requests_hit_pct", AreaGC, "% of requests", 1, 10},
	{"gc.request_paused_pct", AreaGC, "% of request time", 5, 20},
	{"memory.old_growth_mb_per_min", AreaMemory, "MB/min", 30, 120},
	{"memory.gen2_fragmentation_pct", AreaMemory, "%", 40, 70},
	{"memory.pinned_objects", AreaMemory, "objects", 2000, 20000},
	{"memory.resident_growth_mb_per_min", AreaMemory, "MB/min", 30, 120},
	{"memory.cgroup_limit_pct", AreaMemory, "% of the limit", 80, 95},
	{"locks.wait_pct", AreaLocks, "% of thread time", 10, 25},
	{"locks.deadlocked_threads", AreaLocks, "threads", 1, 2},
	{"locks.blocked_on_one_lock", AreaLocks, "threads", 5, 20},
	{"threadpool.queue_length", AreaThreadPool, "work items", 20, 100},
	{"threadpool.thread_growth", AreaThreadPool, "threads", 6, 20},
	{"exceptions.per_sec", AreaExceptions, "exceptions/s", 50, 500},
	{"cpu.demand_pct", AreaCPU, "% of cores", 40, 75},
	{"cpu.thread_pct", AreaCPU, "% of one core", 70, 90},
}

// Guards: below these a figure is not judged (too little to mean anything).
const (
	// MinOldGrowthMB: growth of gen2+LOH+POH below this is not a leak
	// suspect, whatever its rate (a short window after startup promotes a
	// few MB).
	MinOldGrowthMB = 16
	// MinOldGrowthGCs: a trend needs this many GCs with heap statistics.
	MinOldGrowthGCs = 3
	// MinFragmentationMB: fragmentation of a gen2 smaller than this is not
	// judged.
	MinFragmentationMB = 64
	// MinSettledGCs: the trend after the warm-up needs this many GCs
	// with heap statistics from the settling on (never one GC: a span of
	// 0 s is no trend).
	MinSettledGCs = 3
	// MinGCsForRate: blocking gen2 and LOH-triggered GCs are judged as a
	// rate from this many on (one in a short window is not a rate: the
	// runtime may make one blocking gen2 GC on its own).
	MinGCsForRate = 2
	// MinResidentGrowthMB: a part of the RSS other than the GC heap that
	// grew less than this over the window is not judged (the runtime's
	// own start, a first burst of work, grow the native heap and the
	// loader heaps by a few MB).
	MinResidentGrowthMB = 16
	// MinBlockedSec: a lock wait still open at the stream's end counts
	// toward a deadlock or a lock's blocked threads once it has lasted
	// this long (a wait that short is a queue moving).
	MinBlockedSec = 1
	// MinRequests: the requests' shares are judged from this many
	// completed requests on (one request in a hundred is the p99).
	MinRequests = 100
)

// threshold returns the row of key; it panics on a key missing from the
// table (a programming error caught by every test).
func threshold(key string) *Threshold {
	for i := range Thresholds {
		if Thresholds[i].Key == key {
			return &Thresholds[i]
		}
	}
	panic("triage: no threshold " + key)
}

// Judge returns the severity of value against the row of key.
func Judge(key string, value float64) Severity {
	t := threshold(key)
	switch {
	case value >= t.Critical:
		return Critical
	case value >= t.Warning:
		return Warning
	}
	return Info
}
