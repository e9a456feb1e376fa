package tracegen

import (
	"time"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/nettrace"
)

// Thread writes events on one OS thread. Its methods return the thread, so
// a sequence reads as the runtime's: th.SuspendEE(...).SuspendEEEnd().
type Thread struct {
	g     *Trace
	id    uint64
	seq   uint32
	lost  uint32
	stack []uint64
}

// ID is the thread's OS id.
func (t *Thread) ID() uint64 { return t.id }

// At sets the trace's clock to d after the session start.
func (t *Thread) At(d time.Duration) *Thread {
	t.g.now = t.g.hdr.SyncTimeQPC + ticks(d, t.g.hdr.QPCFrequency)
	return t
}

// After moves the trace's clock d on.
func (t *Thread) After(d time.Duration) *Thread {
	t.g.now += ticks(d, t.g.hdr.QPCFrequency)
	return t
}

// Tick sets the trace's clock to the raw timestamp ts.
func (t *Thread) Tick(ts int64) *Thread {
	t.g.now = ts
	return t
}

func ticks(d time.Duration, freq int64) int64 {
	if freq == 1_000_000_000 {
		return int64(d)
	}
	return int64(float64(d) * float64(freq) / 1e9)
}

// Stack gives the next event this stack (innermost frame first).
func (t *Thread) Stack(ips ...uint64) *Thread {
	t.stack = ips
	return t
}

// Lost says that n events of this thread were lost before its next one
// (the stream's sequence numbers skip them; a reader counts them).
func (t *Thread) Lost(n uint32) *Thread {
	t.lost += n
	return t
}

// Event writes an event of any provider: metadata as given (for
// EventSource events with their field lists), payload as built.
func (t *Thread) Event(m *nettrace.Metadata, payload []byte) *Thread {
	return t.emit(m, t.id, payload)
}

// Runtime writes runtime event id at version v with a payload as given:
// for versions and shapes the typed methods do not write.
func (t *Thread) Runtime(id, v uint32, payload []byte) *Thread {
	return t.emit(t.g.meta(nettrace.Runtime, id, v), t.id, payload)
}

// Rundown writes rundown event id at version v with a payload as given.
func (t *Thread) Rundown(id, v uint32, payload []byte) *Thread {
	return t.emit(t.g.meta(nettrace.Rundown, id, v), t.id, payload)
}

func (t *Thread) rt(id uint32, payload []byte) *Thread {
	return t.emit(t.g.meta(nettrace.Runtime, id, version(nettrace.Runtime, id)), t.id, payload)
}

func (t *Thread) emit(m *nettrace.Metadata, about uint64, payload []byte) *Thread {
	t.seq += 1 + t.lost
	t.g.evs = append(t.g.evs, nettrace.Event{
		Meta: m, Timestamp: t.g.now, ThreadID: about, CaptureThreadID: t.id, ProcessorNumber: uint32(t.id % 4),
		SequenceNumber: t.seq, LostBefore: t.lost, Stack: t.stack, Payload: payload,
	})
	t.lost, t.stack = 0, nil
	return t
}

// GC and suspension events.

// SuspendEE writes GCSuspendEEBegin: the runtime starts to suspend for
// reason; count is the GC's number for a GC suspension (0xFFFFFFFF
// otherwise, as the runtime writes it).
func (t *Thread) SuspendEE(reason clrevents.SuspendReason, count uint32) *Thread {
	return t.rt(clrevents.IDGCSuspendEEBegin, AppendSuspendEEBegin(nil, clrevents.GCSuspendEEBegin{Reason: reason, Count: count}))
}

// SuspendEEEnd writes GCSuspendEEEnd: every thread is stopped.
func (t *Thread) SuspendEEEnd() *Thread {
	return t.rt(clrevents.IDGCSuspendEEEnd, AppendClrInstance(nil))
}

// RestartEEBegin writes GCRestartEEBegin.
func (t *Thread) RestartEEBegin() *Thread {
	return t.rt(clrevents.IDGCRestartEEBegin, AppendClrInstance(nil))
}

// RestartEEEnd writes GCRestartEEEnd: the threads run again.
func (t *Thread) RestartEEEnd() *Thread {
	return t.rt(clrevents.IDGCRestartEEEnd, AppendClrInstance(nil))
}

// Restart writes RestartEEBegin and RestartEEEnd at the same time.
func (t *Thread) Restart() *Thread { return t.RestartEEBegin().RestartEEEnd() }

// GCTriggered writes GCTriggered on the thread whose allocation (or call)
// triggered a GC.
func (t *Thread) GCTriggered(reason clrevents.GCReason) *Thread {
	return t.rt(clrevents.IDGCTriggered, AppendGCTriggered(nil, clrevents.GCTriggered{Reason: reason}))
}

// GCStart writes GCStart: GC number count of generation gen.
func (t *Thread) GCStart(count, gen uint32, reason clrevents.GCReason, typ clrevents.GCType) *Thread {
	return t.rt(clrevents.IDGCStart, AppendGCStart(nil, clrevents.GCStart{Count: count, Depth: gen, Reason: reason, Type: typ}))
}

// GCEnd writes GCEnd.
func (t *Thread) GCEnd(count, gen uint32) *Thread {
	return t.rt(clrevents.IDGCEnd, AppendGCEnd(nil, clrevents.GCEnd{Count: count, Depth: gen}))
}

// HeapStats writes GCHeapStats.
func (t *Thread) HeapStats(h clrevents.GCHeapStats) *Thread {
	return t.rt(clrevents.IDGCHeapStats, AppendGCHeapStats(nil, h))
}

// PerHeapHistory writes a GCPerHeapHistory v3 of heap 0 with every count
// zero (what a test of the pairing rules needs: that there is one).
func (t *Thread) PerHeapHistory() *Thread {
	return t.Runtime(clrevents.IDGCPerHeapHistory, 3, Payload(nil).Zeros(86))
}

// Allocation, contention, threads, methods, samples.

// AllocationTick writes GCAllocationTick.
func (t *Thread) AllocationTick(a clrevents.AllocationTick) *Thread {
	return t.rt(clrevents.IDGCAllocationTick, AppendAllocationTick(nil, a))
}

// ContentionStart writes ContentionStart v2: the thread waits for lock
// (locked on obj) that owner holds.
func (t *Thread) ContentionStart(lock, obj, owner uint64) *Thread {
	return t.rt(clrevents.IDContentionStart, AppendContentionStart(nil,
		clrevents.ContentionStart{ClrInstanceID: 1, LockID: lock, AssociatedObjectID: obj, LockOwnerThreadID: owner}))
}

// ContentionStop writes ContentionStop v1 with the runtime's measure of
// the wait.
func (t *Thread) ContentionStop(durationNs float64) *Thread {
	return t.rt(clrevents.IDContentionStop, AppendContentionStop(nil, clrevents.ContentionStop{ClrInstanceID: 1, DurationNs: durationNs}))
}

// ContentionStopV0 writes ContentionStop v0, which has no duration (before
// .NET 8).
func (t *Thread) ContentionStopV0() *Thread {
	return t.Runtime(clrevents.IDContentionStop, 0, Payload(nil).U8(0).U16(1))
}

// ThreadCreated writes ThreadCreated: the runtime's Thread object at obj is
// managed thread managed on OS thread os.
func (t *Thread) ThreadCreated(obj uint64, managed, os uint32) *Thread {
	return t.rt(clrevents.IDThreadCreated, AppendThread(nil, clrevents.Thread{ThreadObject: obj, AppDomainID: 1, ManagedID: managed, OSThreadID: os, ClrInstanceID: 1}))
}

// RundownThread writes the rundown's ThreadDC for the same facts.
func (t *Thread) RundownThread(obj uint64, managed, os uint32) *Thread {
	return t.Rundown(clrevents.IDRundownThreadDC, 0, AppendThread(nil, clrevents.Thread{ThreadObject: obj, AppDomainID: 1, ManagedID: managed, OSThreadID: os, ClrInstanceID: 1}))
}

// MethodLoad writes MethodLoadVerbose.
func (t *Thread) MethodLoad(m clrevents.Method) *Thread {
	return t.rt(clrevents.IDMethodLoadVerbose, AppendMethodVerbose(nil, m))
}

// Sample writes the sample profiler's ThreadSample of thread about,
// captured by this thread (the sampler), with the next event's stack.
func (t *Thread) Sample(about uint64, typ clrevents.SampleType) *Thread {
	m := t.g.meta(nettrace.SampleProfiler, clrevents.IDThreadSample, 0)
	return t.emit(m, about, AppendThreadSample(nil, clrevents.ThreadSample{Type: typ}))
}

// Heap events: what the heap analysis replays.

// MovedRanges writes GCBulkMovedObjectRanges: a compacting GC moved these
// ranges (index numbers the events of one heap walk).
func (t *Thread) MovedRanges(index uint32, rs ...clrevents.MovedRange) *Thread {
	return t.rt(clrevents.IDGCBulkMovedObjectRanges, AppendBulkMovedRanges(nil, index, rs))
}

// SurvivingRanges writes GCBulkSurvivingObjectRanges: a sweeping GC left
// these ranges in place.
func (t *Thread) SurvivingRanges(index uint32, rs ...clrevents.SurvivingRange) *Thread {
	return t.rt(clrevents.IDGCBulkSurvivingObjectRanges, AppendBulkSurvivingRanges(nil, index, rs))
}

// GenerationRange writes GCGenerationRange.
func (t *Thread) GenerationRange(g clrevents.GenerationRange) *Thread {
	return t.rt(clrevents.IDGCGenerationRange, AppendGenerationRange(nil, g))
}

// BulkType writes BulkType: names of type ids.
func (t *Thread) BulkType(types ...clrevents.BulkTypeEntry) *Thread {
	return t.rt(clrevents.IDBulkType, AppendBulkType(nil, types...))
}

// SampledObjectAllocation writes GCSampledObjectAllocationHigh (the
// runtime's older object sampling).
func (t *Thread) SampledObjectAllocation(s clrevents.SampledObjectAllocation) *Thread {
	return t.rt(clrevents.IDGCSampledObjectAllocHigh, AppendSampledObjectAllocation(nil, s))
}

// AllocationSampled writes AllocationSampled (.NET 10's Poisson sampling).
func (t *Thread) AllocationSampled(a clrevents.AllocationSampled) *Thread {
	return t.rt(clrevents.IDAllocationSampled, AppendAllocationSampled(nil, a))
}
