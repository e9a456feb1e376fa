package triage

// Facts are the figures the findings are computed from: one struct per
// area, each filled from whichever analysis knows it best (Source says
// which). Seen is false when the stream carried nothing for the area.
type Facts struct {
	WindowSec float64 `json:"window_sec"`
	// Target is the argument that names the target in the next commands:
	// "--pid 4242", or a trace file's path.
	Target     string          `json:"target"`
	GC         GCFacts         `json:"gc"`
	Memory     MemoryFacts     `json:"memory"`
	Locks      LockFacts       `json:"locks"`
	ThreadPool ThreadPoolFacts `json:"threadpool"`
	Exceptions ExceptionFacts  `json:"exceptions"`
	CPU        CPUFacts        `json:"cpu"`
	// Requests is set when the stream has ASP.NET Core's request events
	// (package requests: what GC pauses cost the requests).
	Requests *RequestFacts `json:"requests,omitempty"`
}

// RequestFacts come from package requests: the requests completed in the
// window and what GC pauses cost them.
type RequestFacts struct {
	Requests int64 `json:"requests"`
	// HitByGC counts the requests a GC pause overlapped; HitPct their
	// share of the requests.
	HitByGC int64   `json:"hit_by_gc"`
	HitPct  float64 `json:"hit_pct"`
	// PausedMs is the request time GC pauses froze, PausedPct its share
	// of the summed request time.
	RequestMs float64 `json:"request_ms"`
	PausedMs  float64 `json:"paused_ms"`
	PausedPct float64 `json:"paused_pct"`
	// WorstRoute is the route with the largest share of its requests hit
	// (of those with at least MinRequests): its requests and hits.
	WorstRoute      string `json:"worst_route,omitempty"`
	WorstRouteCount int64  `json:"worst_route_requests,omitempty"`
	WorstRouteHit   int64  `json:"worst_route_hit,omitempty"`
	// WorstRouteP99HitMs and P99NotHitMs: that route's p99 latency of the
	// requests hit and of those not hit.
	WorstRouteP99HitMs    float64 `json:"worst_route_p99_hit_ms,omitempty"`
	WorstRouteP99NotHitMs float64 `json:"worst_route_p99_not_hit_ms,omitempty"`
}

// GCFacts come from package gcpause (and the allocation rate from the
// runtime's counters).
type GCFacts struct {
	Seen  bool `json:"seen"`
	Count int  `json:"count"`
	// PausePct is the runtime's own pause time (what
	// GC.GetTotalPauseDuration adds over the window) as a share of the
	// window.
	PausePct       float64 `json:"pause_pct"`
	PausedMs       float64 `json:"paused_ms"`
	MaxPauseMs     float64 `json:"max_pause_ms"`
	MaxPauseGC     uint32  `json:"max_pause_gc"`
	MaxPauseReason string  `json:"max_pause_reason"`
	MaxPauseType   string  `json:"max_pause_type"`
	MaxPauseGen    int     `json:"max_pause_generation"`
	Gen2Blocking   int     `json:"gen2_blocking"`
	Induced        int     `json:"induced"`
	// SnapshotGC is the number of the GC a heap snapshot in the stream
	// induced (0: none); it is not in Induced.
	SnapshotGC uint32 `json:"snapshot_gc,omitempty"`
	// SnapshotPauseMs is that GC's pause (the runtime's count), kept out
	// of PausedMs and PausePct (and its stop out of StoppedMs).
	SnapshotPauseMs float64 `json:"snapshot_pause_ms,omitempty"`
	LOHTriggered    int     `json:"loh_triggered"`
	MaxSuspendMs    float64 `json:"max_suspend_ms"`
	AllocMBPerSec   float64 `json:"alloc_mb_per_sec"`
	HasAllocRate    bool    `json:"has_alloc_rate"`
	// MaxPauseMs above is the longest GC's stop, suspension to restart
	// (what the application's threads felt); PausedMs and PausePct the
	// runtime's own pause time. StoppedMs and StoppedPct are every
	// stop-the-world moment of the window, GC or not, each moment once.
	StoppedMs  float64 `json:"stopped_ms"`
	StoppedPct float64 `json:"stopped_pct"`
	// Other*: the runtime's suspensions for reasons other than a GC (the
	// sample profiler's, tiered compilation's, a debugger's, ...): how
	// many, their stopped time, the longest, the reason with the most
	// time and the share of the window. ProfilerInStream: the stream had
	// the runtime's sample profiler on, whose every tick is such a
	// suspension (a cost of the measurement itself).
	OtherSuspensions int     `json:"other_suspensions"`
	OtherStoppedMs   float64 `json:"other_stopped_ms"`
	OtherMaxMs       float64 `json:"other_max_ms"`
	OtherTopReason   string  `json:"other_top_reason,omitempty"`
	OtherPct         float64 `json:"other_pct"`
	ProfilerInStream bool    `json:"profiler_in_stream,omitempty"`
}

// MemoryFacts come from the heap statistics every GC reports (package
// gcpause): the old generations (gen2, LOH, POH) after each GC; and, for
// a live process, from its memory split (Split).
type MemoryFacts struct {
	Seen bool `json:"seen"`
	// GCs is the number of GCs with heap statistics in the window.
	GCs int `json:"gcs"`
	// FirstOldMB and LastOldMB are gen2+LOH+POH after the first and the
	// last of them, SpanSec the time between the two.
	FirstOldMB     float64 `json:"first_old_mb"`
	LastOldMB      float64 `json:"last_old_mb"`
	SpanSec        float64 `json:"span_sec"`
	OldGrowthMBMin float64 `json:"old_growth_mb_per_min"`
	// The judged trend runs from the heap's settling: the GCs of the
	// first third of the span (start-up, a heap growing from nothing)
	// are its warm-up. SettledGCs counts the GCs from the settling on,
	// SettledOldMB is gen2+LOH+POH at the first of them, SettledSec the
	// time from it to the last; OldGrowthMBMin is over that stretch when
	// Settled (WarmupMB: the growth before it). A caller without the
	// series leaves Settled false: the trend is first to last.
	Settled          bool    `json:"settled"`
	SettledGCs       int     `json:"settled_gcs,omitempty"`
	SettledOldMB     float64 `json:"settled_old_mb,omitempty"`
	SettledSec       float64 `json:"settled_sec,omitempty"`
	WarmupMB         float64 `json:"warmup_mb,omitempty"`
	Gen2MB           float64 `json:"gen2_mb"`
	LOHMB            float64 `json:"loh_mb"`
	Gen2FragPct      float64 `json:"gen2_fragmentation_pct"`
	HasFragmentation bool    `json:"has_fragmentation"`
	MaxPinned        uint32  `json:"max_pinned_objects"`
	// Split is the process's memory split over the window (live targets
	// whose /proc is readable; nil otherwise): set by the caller that read
	// it (SplitOf).
	Split *SplitFacts `json:"split,omitempty"`
}

// LockFacts come from package locks.
type LockFacts struct {
	Seen        bool    `json:"seen"`
	Contentions int64   `json:"contentions"`
	WaitMs      float64 `json:"wait_ms"`
	// Threads is the number of threads the stream showed (any event); the
	// share of thread time waiting is WaitMs over Threads × the window.
	Threads   int     `json:"threads"`
	WaitPct   float64 `json:"wait_pct"`
	TopLock   string  `json:"top_lock,omitempty"`
	TopWaitMs float64 `json:"top_lock_wait_ms"`
	TopCount  int64   `json:"top_lock_contentions"`
	// TopStack is the top lock's longest-waiting stack, leaf first.
	TopStack []string `json:"top_stack,omitempty"`
	// Deadlocks are the cycles of threads (OS ids, in wait order, lowest
	// first) each waiting, for MinBlockedSec or longer at the stream's
	// end, for a lock the next one holds, as the contention events named
	// the owners (ContentionStart v2).
	Deadlocks [][]uint64 `json:"deadlocks,omitempty"`
	// MostBlocked is the most threads waiting for MinBlockedSec or longer
	// on one lock at the stream's end; BlockedLock names it,
	// BlockedOwnerTid is its owner's OS thread id (0: unknown).
	MostBlocked     int    `json:"most_blocked"`
	BlockedLock     string `json:"blocked_lock,omitempty"`
	BlockedOwnerTid uint64 `json:"blocked_owner_os_tid,omitempty"`
}

// ThreadPoolFacts: today from the runtime's counters (Source "counters":
// dotnet.thread_pool.* sampled once a second); a thread-pool analysis
// fills the same fields (and the episode and blocking-site ones) when it
// lands.
type ThreadPoolFacts struct {
	Source          string  `json:"source"`
	Seen            bool    `json:"seen"`
	QueueMax        float64 `json:"queue_max"`
	QueueLast       float64 `json:"queue_last"`
	ThreadsFirst    float64 `json:"threads_first"`
	ThreadsMax      float64 `json:"threads_max"`
	CompletedPerSec float64 `json:"completed_per_sec"`
	// Starvations and TopBlockingSite: from a thread-pool analysis
	// (Source other than "counters").
	Starvations     int    `json:"starvations,omitempty"`
	TopBlockingSite string `json:"top_blocking_site,omitempty"`
}

// ExceptionFacts: today from the runtime's exception counter (Source
// "counters"); an exception analysis also names the top type and site.
type ExceptionFacts struct {
	Source  string  `json:"source"`
	Seen    bool    `json:"seen"`
	Count   float64 `json:"count"`
	PerSec  float64 `json:"per_sec"`
	TopType string  `json:"top_type,omitempty"`
	TopSite string  `json:"top_site,omitempty"`
}

// CPUFacts: the process's CPU against the cores. Source "schedstat": the
// threads' time running or runnable from /proc (what the process asks
// for, which a loaded machine does not shrink); "counters": the runtime's
// cpu-usage (what it got).
type CPUFacts struct {
	Source string  `json:"source"`
	Seen   bool    `json:"seen"`
	Cores  int     `json:"cores"`
	Pct    float64 `json:"pct_of_cores"`
	// UsagePct is the runtime's cpu-usage counter (share of all cores the
	// process used), -1 unknown.
	UsagePct   float64  `json:"usage_pct"`
	TopMethods []Method `json:"top_methods,omitempty"`
	// MethodsSource is the sampler TopMethods come from: "eventpipe" (the
	// runtime's samples in the stream) or "perf" (perf_event beside it).
	MethodsSource string `json:"methods_source,omitempty"`
	// BusiestThread*: the one thread that asked for the most CPU
	// (running or runnable, /proc schedstat) as a share of one core: a
	// thread at 100% is saturated whatever the process's share of all
	// cores (0: unknown).
	BusiestThreadPct  float64 `json:"busiest_thread_pct,omitempty"`
	BusiestThreadID   uint64  `json:"busiest_thread_id,omitempty"`
	BusiestThreadName string  `json:"busiest_thread_name,omitempty"`
}

// Method is one method's share of the managed samples (leaf frames).
type Method struct {
	Name string  `json:"name"`
	Pct  float64 `json:"pct"`
}
