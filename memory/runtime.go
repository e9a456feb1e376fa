package memory

import (
	"sync"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/nettrace"
)

// maxAddresses bounds the heap addresses kept: the GC range needs one.
const maxAddresses = 256

// RuntimeWants accepts the runtime events a session for Runtime asks for:
// GCAllocationTick (an object's address, v3+; about one per 100 KB
// allocated) and GCHeapStats (the generations' sizes after each GC).
// GCGenerationRange (each region's start at every GC) is read when a
// trace has it, not asked for: its keyword also turns on the bulk
// moved/surviving range events of every GC.
func RuntimeWants(m *nettrace.Metadata) bool {
	if m.Runtime != nettrace.Runtime {
		return false
	}
	switch m.EventID {
	case clrevents.IDGCAllocationTick, clrevents.IDGCHeapStats:
		return true
	}
	return false
}

func reads(m *nettrace.Metadata) bool {
	return RuntimeWants(m) || (m.Runtime == nettrace.Runtime && m.EventID == clrevents.IDGCGenerationRange)
}

// Runtime is the analysis of what the runtime says of its GC heap: the
// addresses it reports in it (Hints.HeapAddresses, to find the GC's
// reservation by them) and the generations' sizes after the last GC.
// Addresses and HeapStats may be called while events are fed.
type Runtime struct {
	ptrSize int
	stats   analysis.Stats

	mu        sync.Mutex
	addrs     []uint64
	seen      map[uint64]bool
	heapStats *clrevents.GCHeapStats
	gcs       int
}

// NewRuntime makes the analysis for a stream with header hdr.
func NewRuntime(hdr *nettrace.Header) *Runtime {
	return &Runtime{ptrSize: hdr.PointerSize, seen: map[uint64]bool{}}
}

// Stats says what the analysis used.
func (r *Runtime) Stats() analysis.Stats { return r.stats }

// Event feeds one event.
func (r *Runtime) Event(ev *nettrace.Event) {
	m := ev.Meta
	if !reads(m) {
		return
	}
	switch m.EventID {
	case clrevents.IDGCAllocationTick:
		a, err := clrevents.DecodeAllocationTick(ev.Payload, m.Version, r.ptrSize)
		if r.stats.Failed(err) {
			return
		}
		r.stats.Used()
		if a.HasAddress && a.Address != 0 {
			r.add(a.Address)
		}
	case clrevents.IDGCGenerationRange:
		g, err := clrevents.DecodeGenerationRange(ev.Payload, m.Version, r.ptrSize)
		if r.stats.Failed(err) {
			return
		}
		r.stats.Used()
		if g.Start != 0 {
			r.add(g.Start)
		}
	case clrevents.IDGCHeapStats:
		h, err := clrevents.DecodeGCHeapStats(ev.Payload, m.Version, r.ptrSize)
		if r.stats.Failed(err) {
			return
		}
		r.stats.Used()
		r.mu.Lock()
		r.heapStats = &h
		r.gcs++
		r.mu.Unlock()
	}
}

func (r *Runtime) add(a uint64) {
	// Regions are 4 MiB apart at least: one address per region is enough.
	key := a &^ (regionAlign - 1)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen[key] || len(r.addrs) >= maxAddresses {
		return
	}
	r.seen[key] = true
	r.addrs = append(r.addrs, a)
}

// Addresses are the heap addresses seen so far (one per region).
func (r *Runtime) Addresses() []uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]uint64(nil), r.addrs...)
}

// HeapStats is the last GC's GCHeapStats (nil before a GC) and the
// number of GCs seen.
func (r *Runtime) HeapStats() (*clrevents.GCHeapStats, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.heapStats == nil {
		return nil, r.gcs
	}
	h := *r.heapStats
	return &h, r.gcs
}
