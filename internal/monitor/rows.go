package monitor

import (
	"time"

	"github.com/clrspy/clrspy/gcpause"
)

// ring keeps the last n values pushed, in a slice allocated once.
type ring[T any] struct {
	buf  []T
	next int
	full bool
}

func newRing[T any](n int) ring[T] { return ring[T]{buf: make([]T, n)} }

func (r *ring[T]) push(v T) {
	r.buf[r.next] = v
	r.next++
	if r.next == len(r.buf) {
		r.next, r.full = 0, true
	}
}

func (r *ring[T]) len() int {
	if r.full {
		return len(r.buf)
	}
	return r.next
}

// slice copies the values out, oldest first.
func (r *ring[T]) slice() []T {
	out := make([]T, 0, r.len())
	if r.full {
		out = append(out, r.buf[r.next:]...)
	}
	return append(out, r.buf[:r.next]...)
}

// GCRow is one GC as the live views show it. Sizes are bytes, times
// milliseconds; values the events did not carry are null (Opt).
type GCRow struct {
	Number     uint32 `json:"number"` // the runtime's GC count
	Index      int    `json:"index"`  // 0-based position in this session
	Generation int    `json:"generation"`
	// Gen is PerfView's Gen column: generation, N/B/F for the type, I/i
	// for induced.
	Gen      string `json:"gen"`
	Type     string `json:"type"` // NonConcurrent, Background, Foreground
	Reason   string `json:"reason"`
	Induced  bool   `json:"induced"`
	Complete bool   `json:"complete"`
	// StartUTC and StartMS are the pause's start (SuspendEEBegin), StartMS
	// since the session start.
	StartUTC  time.Time `json:"start_utc"`
	StartMS   float64   `json:"start_ms"`
	SuspendMS float64   `json:"suspend_ms"` // time to suspend the threads
	// PauseMS is PerfView's pause: SuspendEEBegin to RestartEEEnd (a
	// background GC's stops summed).
	PauseMS float64 `json:"pause_ms"`
	// PauseRuntimeMS is the pause as the runtime counts it for
	// GC.GetTotalPauseDuration (gcpause.GC.PauseRuntimeNanos); null when
	// its events are missing.
	PauseRuntimeMS Opt `json:"pause_runtime_ms"`
	Pauses         int `json:"pauses"` // stops (a background GC makes several)
	// StartSeen is false for a GC whose pause began before the session:
	// its pauses are lower bounds, left out of maxima and histograms.
	StartSeen bool `json:"start_seen"`
	// HeapBeforeBytes is the heap size when the GC started, HeapAfterBytes
	// after it (fragmentation included).
	HeapBeforeBytes Opt `json:"heap_before_bytes"`
	HeapAfterBytes  Opt `json:"heap_after_bytes"`
	PromotedBytes   Opt `json:"promoted_bytes"`
	Gen0AllocBytes  Opt `json:"gen0_alloc_bytes"` // allocated in gen0 since the previous GC
	// GenSizeAfterBytes: gen0, gen1, gen2, LOH, POH after the GC.
	GenSizeAfterBytes [5]Opt `json:"gen_size_after_bytes"`
	Heaps             int    `json:"heaps,omitempty"`
	LostEvents        bool   `json:"lost_events,omitempty"`
}

func newGCRow(g *gcpause.GC) GCRow {
	r := GCRow{
		Number: g.Number, Index: g.Index, Generation: g.Generation, Type: g.Type.String(), Reason: g.Reason.String(),
		Induced: g.Induced, Complete: g.Complete, StartUTC: g.PauseStartUTC.UTC(), StartMS: ms(g.PauseStartNanos),
		SuspendMS: ms(g.SuspendNanos), PauseMS: ms(g.PauseNanos), PauseRuntimeMS: optNanos(g.PauseRuntimeNanos),
		Pauses: g.Pauses, StartSeen: g.StartSeen,
		HeapBeforeBytes: None, HeapAfterBytes: None, PromotedBytes: None, Gen0AllocBytes: None,
		Heaps: g.Heaps, LostEvents: g.LostEvents,
	}
	for i := range r.GenSizeAfterBytes {
		r.GenSizeAfterBytes[i] = None
	}
	if g.HasHeapStats {
		r.HeapAfterBytes = Opt(g.HeapStats.TotalHeapSize())
		r.PromotedBytes = Opt(g.HeapStats.TotalPromoted())
		for i := range r.GenSizeAfterBytes {
			if i < 4 || g.HeapStats.HasPOH {
				r.GenSizeAfterBytes[i] = Opt(g.HeapStats.GenerationSize[i])
			}
		}
	}
	if g.HasPerHeap {
		var before uint64
		for _, s := range g.Gens {
			before += s.SizeBefore
		}
		r.HeapBeforeBytes = Opt(before)
		r.Gen0AllocBytes = Opt(g.Gen0Allocated)
	}
	return r
}

// genName is PerfView's Gen column for a row.
func (r *GCRow) genName() string {
	b := []byte{byte('0' + r.Generation%10)}
	switch r.Type {
	case "Background":
		b = append(b, 'B')
	case "Foreground":
		b = append(b, 'F')
	default:
		b = append(b, 'N')
	}
	switch r.Reason {
	case "Induced":
		b = append(b, 'I')
	case "InducedNotForced":
		b = append(b, 'i')
	}
	return string(b)
}

// SuspensionRow is one runtime suspension that was not a GC's.
type SuspensionRow struct {
	Reason     string    `json:"reason"`
	Code       uint32    `json:"code"`
	ThreadID   uint64    `json:"thread_id"`
	StartUTC   time.Time `json:"start_utc"`
	StartMS    float64   `json:"start_ms"`
	SuspendMS  Opt       `json:"suspend_ms"`
	PauseMS    float64   `json:"pause_ms"`
	Incomplete bool      `json:"incomplete,omitempty"`
}

// allocWindow remembers the gen0 allocation of recent GCs, for a rate.
type allocWindow struct {
	at    [256]int64 // ns, pause end
	bytes [256]uint64
	next  int
	n     int
}

func (a *allocWindow) add(at int64, b uint64) {
	a.at[a.next], a.bytes[a.next] = at, b
	a.next = (a.next + 1) % len(a.at)
	a.n = min(a.n+1, len(a.at))
}

// since sums what GCs after t reported.
func (a *allocWindow) since(t int64) (sum uint64, gcs int) {
	for i := 0; i < a.n; i++ {
		j := (a.next - 1 - i + len(a.at)) % len(a.at)
		if a.at[j] <= t {
			break
		}
		sum += a.bytes[j]
		gcs++
	}
	return sum, gcs
}
