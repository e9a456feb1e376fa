package gcpause

import (
	"time"

	"github.com/clrspy/clrspy/clrevents"
)

// GC is one garbage collection.
type GC struct {
	Index      int    // 0-based position in this session
	Number     uint32 // the runtime's GC count (GCStart.Count)
	Generation int    // condemned generation
	Type       clrevents.GCType
	Reason     clrevents.GCReason
	Induced    bool
	// HeapDump marks the GC a heap snapshot induced: the runtime described
	// the heap during it (GCBulkNode events, seen when the stream's
	// analyses keep them: a heap snapshot's do). The tool's, not the
	// application's.
	HeapDump bool

	// Times in nanoseconds since the session start.
	StartNanos      int64 // GCStart
	PauseStartNanos int64 // usually SuspendEEBegin
	PauseStartUTC   time.Time
	SuspendNanos    int64 // SuspendEEBegin → SuspendEEEnd (summed for a BGC)
	PauseNanos      int64 // SuspendEEBegin → RestartEEEnd (summed for a BGC)
	DurationNanos   int64 // GCStart → GCEnd, the GC's own work; -1 unknown
	PauseEndNanos   int64 // last RestartEEEnd
	Pauses          int   // stops the GC made (more than 1 for a BGC)
	// PausePercentSinceLastGC is the pause as a share of the time since the
	// previous GC's pause ended.
	PausePercentSinceLastGC float64

	// PauseRuntimeNanos is the pause as the runtime itself counts it for
	// GC.GetTotalPauseDuration and GCMemoryInfo.PauseDurations, rebuilt
	// from the events that mark the runtime's timestamps (runtime.go); -1
	// when those events are missing.
	PauseRuntimeNanos int64

	// Complete is set when both the pause end and the heap statistics
	// arrived (for a background GC: its heap statistics).
	Complete bool
	// StartSeen is false when the GC's pause began before the session (or
	// its suspension was lost): no SuspendEEBegin preceded its GCStart, so
	// PauseNanos and PauseRuntimeNanos run from GCStart and are lower
	// bounds. Such a GC counts in the totals (the stopped time inside the
	// session is real) but not in max, mean, percentiles or the histogram.
	StartSeen bool
	// Flags describing what was missing or doubtful.
	NoSuspension      bool // GCStart without a tracked SuspendEEBegin
	MissingSuspendEnd bool // suspension measured to GCStart instead
	LostEvents        bool // events were lost while this GC ran
	ThreadID          uint64

	HasHeapStats bool
	HeapStats    clrevents.GCHeapStats

	// From GCGlobalHeapHistory.
	HasGlobal        bool
	NumHeaps         int
	GlobalMechanisms uint32
	PauseMode        uint32
	HasPauseMode     bool // the history's version carries PauseMode (V1+)

	// From GCPerHeapHistory, summed over heaps; index 3 is LOH, 4 POH.
	HasPerHeap    bool
	Heaps         int
	Gens          [5]GenSums
	Gen0Allocated uint64 // bytes allocated in gen0 since the previous GC

	pauseStartTS int64  // event clock
	bgcThread    uint64 // a background GC's own thread (its SuspendForGCPrep's); 0 unknown
	orphaned     bool   // its end can no longer be seen
	emitted      bool

	rt rtMarks
}

// GenSums are one generation's GCPerHeapHistory values summed over heaps.
type GenSums struct {
	SizeBefore     uint64
	ObjSpaceBefore uint64
	SizeAfter      uint64
	ObjSizeAfter   uint64
	Fragmentation  uint64
	Survived       uint64
}

// Bytes per MB as PerfView uses them (decimal megabytes).
const mb = 1e6

// HeapSizeAfterMB is the heap size after the GC, fragmentation included
// (HeapStats), or -1 when unknown.
func (g *GC) HeapSizeAfterMB() float64 {
	if !g.HasHeapStats {
		return -1
	}
	return float64(g.HeapStats.TotalHeapSize()) / mb
}

// HeapSizePeakMB is the heap size when the GC started (PerHeapHistory
// sizes before), or -1 when unknown.
func (g *GC) HeapSizePeakMB() float64 {
	if !g.HasPerHeap {
		return -1
	}
	var t uint64
	for _, s := range g.Gens {
		t += s.SizeBefore
	}
	return float64(t) / mb
}

// PromotedMB is what survived the GC (HeapStats), or -1 when unknown.
func (g *GC) PromotedMB() float64 {
	if !g.HasHeapStats {
		return -1
	}
	return float64(g.HeapStats.TotalPromoted()) / mb
}

// Gen0AllocMB is what was allocated in gen0 since the previous GC, or -1.
func (g *GC) Gen0AllocMB() float64 {
	if !g.HasPerHeap {
		return -1
	}
	return float64(g.Gen0Allocated) / mb
}

// GenSizeAfterMB is generation gen's size after the GC (HeapStats), or -1.
func (g *GC) GenSizeAfterMB(gen int) float64 {
	if !g.HasHeapStats || gen < 0 || gen > 4 || (gen == 4 && !g.HeapStats.HasPOH) {
		return -1
	}
	return float64(g.HeapStats.GenerationSize[gen]) / mb
}

// SurvivalPercent is the share of generation gen's objects that survived,
// or -1 when the generation was not collected or the data is missing.
// Survival is only meaningful for condemned generations (and the large
// object heap in a gen2 GC).
func (g *GC) SurvivalPercent(gen int) float64 {
	if !g.HasPerHeap || gen < 0 || gen >= len(g.Gens) {
		return -1
	}
	if gen <= 2 && gen > g.Generation || gen > 2 && g.Generation < 2 {
		return -1
	}
	s := g.Gens[gen]
	if s.ObjSpaceBefore == 0 {
		return -1
	}
	return float64(s.Survived) * 100 / float64(s.ObjSpaceBefore)
}

// FragmentationPercent is generation gen's free space after the GC as a
// share of its size, or -1.
func (g *GC) FragmentationPercent(gen int) float64 {
	if !g.HasPerHeap || gen < 0 || gen >= len(g.Gens) {
		return -1
	}
	s := g.Gens[gen]
	if s.SizeAfter == 0 {
		return -1
	}
	return float64(s.Fragmentation) * 100 / float64(s.SizeAfter)
}

// GenerationName is PerfView's Gen column: the generation followed by N
// (NonConcurrent), B (Background) or F (Foreground), then I for an induced
// GC or i for InducedNotForced.
func (g *GC) GenerationName() string {
	t := 0
	switch g.Type {
	case clrevents.GCBackground:
		t = 1
	case clrevents.GCForeground:
		t = 2
	}
	i := 0
	switch g.Reason {
	case clrevents.ReasonInduced:
		i = 1
	case clrevents.ReasonInducedNotForced:
		i = 2
	}
	return genNames[((g.Generation%10+10)%10)*9+t*3+i]
}

// genNames are the GenerationName values, made once (a row per GC does
// not allocate its name): generation digit, type, induced mark.
var genNames = func() (n [90]string) {
	for gen := range 10 {
		for t, tc := range "NBF" {
			for i, ic := range []string{"", "I", "i"} {
				n[gen*9+t*3+i] = string(rune('0'+gen)) + string(tc) + ic
			}
		}
	}
	return n
}()

// Stop is one stretch during which the runtime was stopped for a GC
// (Options.OnStop): from SuspendEEBegin to RestartEEEnd. Times are
// nanoseconds since the session start.
type Stop struct {
	GC              *GC
	StartNanos      int64  // SuspendEEBegin
	SuspendEndNanos int64  // SuspendEEEnd: threads stopped from here on; -1 unknown
	EndNanos        int64  // RestartEEEnd
	ThreadID        uint64 // the thread that suspended the runtime
}

// Suspension is one runtime suspension that was not a GC's, or a GC
// suspension without a GC.
type Suspension struct {
	Reason       clrevents.SuspendReason
	ThreadID     uint64
	StartNanos   int64 // SuspendEEBegin since the session start
	StartUTC     time.Time
	SuspendNanos int64 // SuspendEEBegin → SuspendEEEnd; -1 unknown
	PauseNanos   int64 // SuspendEEBegin → RestartEEEnd
	// Incomplete is set when the suspension did not end with a RestartEEEnd
	// (lost events, or the session ended first); PauseNanos then runs to
	// where it was given up.
	Incomplete bool
}

// ReasonRollup aggregates the suspensions of one reason: the one row of
// the suspensions-by-reason table that a file's report (text, --json, the
// page) and the live views (the monitor's snapshot, the page, the
// metrics) render. Its JSON form is in milliseconds (MarshalJSON).
type ReasonRollup struct {
	Reason       clrevents.SuspendReason
	Count        int
	Incomplete   int
	TotalNanos   int64 // pause time (begin → restart end)
	MaxNanos     int64
	TotalSuspend int64 // begin → suspend end
	MaxSuspend   int64
}

func (r *ReasonRollup) add(pause, suspend int64, incomplete bool) {
	r.Count++
	if incomplete {
		r.Incomplete++
	}
	r.TotalNanos += pause
	r.MaxNanos = max(r.MaxNanos, pause)
	if suspend > 0 {
		r.TotalSuspend += suspend
		r.MaxSuspend = max(r.MaxSuspend, suspend)
	}
}
