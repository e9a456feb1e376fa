package gcpause

import "github.com/clrspy/clrspy/clrevents"

// Flavor is the GC's configuration, as far as the events tell.
type Flavor struct {
	// Kind is "server", "workstation", or "" while unknown.
	Kind string `json:"kind"`
	// KindFrom says how Kind is known: "startup_flags" (the runtime's own
	// configuration, in the rundown at the session's end or in a trace
	// file), "heap_count" (a GC ran on more than one heap: server), or
	// "gc_thread" (whether GCs run on the thread that triggered them, as
	// workstation GCs do, or on dedicated GC threads, as server GCs do;
	// decided by the majority of the GCs seen).
	KindFrom string `json:"kind_from,omitempty"`
	// Concurrent: background GCs are enabled; null while unknown.
	Concurrent *bool `json:"concurrent"`
	// ConcurrentFrom: "startup_flags", "pause_mode" (the latency mode of
	// the last GC: Batch means no background GCs, which is how the runtime
	// applies gcConcurrent=0, and also what GCSettings.LatencyMode = Batch
	// does), or "background_gc" (one was seen).
	ConcurrentFrom string `json:"concurrent_from,omitempty"`
	// Heaps is the number of GC heaps in the last GC that reported them
	// (server GC with dynamic adaptation starts with one): the heap count
	// the GC's row shows.
	Heaps int `json:"heaps"`
	// LatencyMode of the last GC: Batch, Interactive, LowLatency,
	// SustainedLowLatency, NoGCRegion.
	LatencyMode string `json:"latency_mode,omitempty"`
}

// String is "server, concurrent" and the like ("unknown" before any GC).
func (f Flavor) String() string {
	k := f.Kind
	if k == "" {
		k = "unknown"
	}
	switch {
	case f.Concurrent == nil:
		return k
	case *f.Concurrent:
		return k + ", concurrent"
	}
	return k + ", non-concurrent"
}

// Startup is the runtime's own startup flags (its RuntimeInformation
// event: package runinfo), when the stream had them (Known).
type Startup struct {
	Known, Server, Concurrent bool
}

// flavorState collects the evidence for Flavor.
type flavorState struct {
	maxHeaps, heaps          int
	pauseMode                uint32
	hasPauseMode, background bool
	// Thread evidence: GCTriggered's thread vs the next GCStart's.
	trigger                 uint64
	hasTrigger              bool
	sameThread, otherThread int
}

func (f *flavorState) triggered(tid uint64) { f.trigger, f.hasTrigger = tid, true }

func (f *flavorState) gcStart(tid uint64, typ clrevents.GCType) {
	if typ == clrevents.GCBackground {
		f.background = true
	}
	if f.hasTrigger && typ != clrevents.GCBackground {
		if tid == f.trigger {
			f.sameThread++
		} else {
			f.otherThread++
		}
	}
	f.hasTrigger = false
}

// gc takes the heap count and latency mode from the GC's record, not from
// the history events themselves: each history goes to the GC that wrote
// it, so a background GC's history written during a foreground GC cannot
// change the foreground GC's heap count while the rows keep them apart.
// The heap count is the row's: the per-heap histories it got, or the
// global history's NumHeaps when no per-heap history came.
func (f *flavorState) gc(g *GC) {
	n := 0
	switch {
	case g.HasPerHeap:
		n = g.Heaps
	case g.HasGlobal:
		n = g.NumHeaps
	}
	if n > 0 {
		f.heaps = n
		f.maxHeaps = max(f.maxHeaps, n)
	}
	if g.HasPauseMode {
		f.pauseMode, f.hasPauseMode = g.PauseMode, true
	}
}

var latencyModes = []string{"Batch", "Interactive", "LowLatency", "SustainedLowLatency", "NoGCRegion"}

// Flavor is the GC's configuration: the runtime's startup flags decide
// when known (s). Before them: a GC on more than one heap means server
// GC; otherwise the GC's thread does — a workstation GC runs on the thread
// that triggered it (GCTriggered and GCStart on the same thread: the
// analysis notes GCTriggered when the stream carries it, though Wants
// does not ask for it), a server GC on its own GC threads (with dynamic
// adaptation a server GC may run on one heap, so the heap count alone
// cannot tell). Concurrent (background) GC: a background GC seen, else
// the last GC's latency mode (Batch means background GCs are off).
func (a *Analyzer) Flavor(s Startup) Flavor {
	f := &a.flavor
	var g Flavor
	g.Heaps = f.heaps
	yes, no := true, false
	switch {
	case s.Known:
		g.Kind, g.KindFrom = kindName(s.Server), "startup_flags"
	case f.maxHeaps > 1:
		g.Kind, g.KindFrom = "server", "heap_count"
	case f.sameThread+f.otherThread > 0:
		g.Kind, g.KindFrom = kindName(f.otherThread > f.sameThread), "gc_thread"
	}
	switch {
	case s.Known:
		g.Concurrent, g.ConcurrentFrom = &no, "startup_flags"
		if s.Concurrent {
			g.Concurrent = &yes
		}
	case f.background:
		g.Concurrent, g.ConcurrentFrom = &yes, "background_gc"
	case f.hasPauseMode:
		g.Concurrent, g.ConcurrentFrom = &yes, "pause_mode"
		if f.pauseMode == 0 {
			g.Concurrent = &no
		}
	}
	if f.hasPauseMode && int(f.pauseMode) < len(latencyModes) {
		g.LatencyMode = latencyModes[f.pauseMode]
	}
	return g
}

func kindName(server bool) string {
	if server {
		return "server"
	}
	return "workstation"
}
