package clrevents

import (
	"strconv"

	"github.com/clrspy/clrspy/nettrace"
)

// Thread-pool events (Threading keyword 0x10000). The portable thread pool
// (.NET 6+, all of .NET on Linux) raises them through
// NativeRuntimeEventSource with the manifest's layouts (ClrEtwAll.man).

// Event ids of the worker thread pool (Microsoft-Windows-DotNETRuntime).
const (
	IDThreadPoolWorkerThreadStart      = 50
	IDThreadPoolWorkerThreadStop       = 51
	IDThreadPoolAdjustmentSample       = 54
	IDThreadPoolAdjustmentAdjustment   = 55
	IDThreadPoolAdjustmentStats        = 56
	IDThreadPoolWorkerThreadWait       = 57
	IDThreadPoolMinMaxThreads          = 59
	IDThreadPoolWorkingThreadCountInfo = 60
)

// ThreadPoolWorker is ThreadPoolWorkerThreadStart (50), Stop (51) and Wait
// (57) v0, which share a layout. Start fires on the new worker, Stop on a
// worker that exits, Wait on a worker that found no work and waits for some.
type ThreadPoolWorker struct {
	// ActiveWorkerThreadCount is the number of worker threads that exist
	// (the runtime's NumExistingThreads) after the change.
	ActiveWorkerThreadCount  uint32
	RetiredWorkerThreadCount uint32
	ClrInstanceID            uint16
}

// DecodeThreadPoolWorker decodes ThreadPoolWorkerThreadStart, Stop and Wait v0.
func DecodeThreadPoolWorker(payload []byte, version uint32, ptrSize int) (ThreadPoolWorker, error) {
	r := nettrace.NewCursor(payload)
	e := ThreadPoolWorker{
		ActiveWorkerThreadCount:  r.U32(),
		RetiredWorkerThreadCount: r.U32(),
		ClrInstanceID:            r.U16(),
	}
	if !r.OK() {
		return ThreadPoolWorker{}, short("ThreadPoolWorkerThread", version, len(payload))
	}
	return e, nil
}

// ThreadPoolAdjustmentSample is ThreadPoolWorkerThreadAdjustmentSample (54)
// v0: the hill-climbing algorithm's throughput measure (completed work
// items per second over its last sample interval).
type ThreadPoolAdjustmentSample struct {
	Throughput    float64
	ClrInstanceID uint16
}

// DecodeThreadPoolAdjustmentSample decodes ThreadPoolWorkerThreadAdjustmentSample v0.
func DecodeThreadPoolAdjustmentSample(payload []byte, version uint32, ptrSize int) (ThreadPoolAdjustmentSample, error) {
	r := nettrace.NewCursor(payload)
	e := ThreadPoolAdjustmentSample{Throughput: r.F64(), ClrInstanceID: r.U16()}
	if !r.OK() {
		return ThreadPoolAdjustmentSample{}, short("ThreadPoolWorkerThreadAdjustmentSample", version, len(payload))
	}
	return e, nil
}

// AdjustmentReason is why the pool changed its target thread count
// (ThreadPoolWorkerThreadAdjustmentAdjustment.Reason).
type AdjustmentReason uint32

// Adjustment reasons, as the manifest's ThreadAdjustmentReasonMap numbers them.
const (
	AdjustWarmup AdjustmentReason = iota
	AdjustInitializing
	AdjustRandomMove
	AdjustClimbingMove
	AdjustChangePoint
	AdjustStabilizing
	AdjustStarvation
	AdjustThreadTimedOut
	AdjustCooperativeBlocking
)

var adjustmentReasons = [...]string{"warmup", "initializing", "random_move", "climbing_move", "change_point",
	"stabilizing", "starvation", "thread_timed_out", "cooperative_blocking"}

// String is the reason in snake case ("starvation"), or "reason_N" for a
// value the manifest does not define.
func (r AdjustmentReason) String() string {
	if int(r) < len(adjustmentReasons) {
		return adjustmentReasons[r]
	}
	return "reason_" + strconv.FormatUint(uint64(r), 10)
}

// AdjustmentReasons lists every defined reason in order (for metric labels
// that must exist before the first adjustment).
func AdjustmentReasons() []AdjustmentReason {
	out := make([]AdjustmentReason, len(adjustmentReasons))
	for i := range out {
		out[i] = AdjustmentReason(i)
	}
	return out
}

// ThreadPoolAdjustment is ThreadPoolWorkerThreadAdjustmentAdjustment (55)
// v0: the pool set a new target worker count.
type ThreadPoolAdjustment struct {
	AverageThroughput    float64
	NewWorkerThreadCount uint32
	Reason               AdjustmentReason
	ClrInstanceID        uint16
}

// DecodeThreadPoolAdjustment decodes ThreadPoolWorkerThreadAdjustmentAdjustment v0.
func DecodeThreadPoolAdjustment(payload []byte, version uint32, ptrSize int) (ThreadPoolAdjustment, error) {
	r := nettrace.NewCursor(payload)
	e := ThreadPoolAdjustment{
		AverageThroughput:    r.F64(),
		NewWorkerThreadCount: r.U32(),
		Reason:               AdjustmentReason(r.U32()),
		ClrInstanceID:        r.U16(),
	}
	if !r.OK() {
		return ThreadPoolAdjustment{}, short("ThreadPoolWorkerThreadAdjustmentAdjustment", version, len(payload))
	}
	return e, nil
}

// ThreadPoolAdjustmentStats is ThreadPoolWorkerThreadAdjustmentStats (56)
// v0: the hill-climbing algorithm's state at a sample.
type ThreadPoolAdjustmentStats struct {
	Duration                       float64 // seconds the sample covered
	Throughput                     float64
	ThreadWave                     float64
	ThroughputWave                 float64
	ThroughputErrorEstimate        float64
	AverageThroughputErrorEstimate float64
	ThroughputRatio                float64
	Confidence                     float64
	NewControlSetting              float64
	NewThreadWaveMagnitude         uint16
	ClrInstanceID                  uint16
}

// DecodeThreadPoolAdjustmentStats decodes ThreadPoolWorkerThreadAdjustmentStats v0.
func DecodeThreadPoolAdjustmentStats(payload []byte, version uint32, ptrSize int) (ThreadPoolAdjustmentStats, error) {
	r := nettrace.NewCursor(payload)
	e := ThreadPoolAdjustmentStats{
		Duration:                       r.F64(),
		Throughput:                     r.F64(),
		ThreadWave:                     r.F64(),
		ThroughputWave:                 r.F64(),
		ThroughputErrorEstimate:        r.F64(),
		AverageThroughputErrorEstimate: r.F64(),
		ThroughputRatio:                r.F64(),
		Confidence:                     r.F64(),
		NewControlSetting:              r.F64(),
		NewThreadWaveMagnitude:         r.U16(),
		ClrInstanceID:                  r.U16(),
	}
	if !r.OK() {
		return ThreadPoolAdjustmentStats{}, short("ThreadPoolWorkerThreadAdjustmentStats", version, len(payload))
	}
	return e, nil
}

// ThreadPoolMinMaxThreads is ThreadPoolMinMaxThreads (59) v0: the pool's
// limits, sent when the pool starts and when they change.
type ThreadPoolMinMaxThreads struct {
	MinWorkerThreads       uint16
	MaxWorkerThreads       uint16
	MinIOCompletionThreads uint16
	MaxIOCompletionThreads uint16
	ClrInstanceID          uint16
}

// DecodeThreadPoolMinMaxThreads decodes ThreadPoolMinMaxThreads v0.
func DecodeThreadPoolMinMaxThreads(payload []byte, version uint32, ptrSize int) (ThreadPoolMinMaxThreads, error) {
	r := nettrace.NewCursor(payload)
	e := ThreadPoolMinMaxThreads{
		MinWorkerThreads:       r.U16(),
		MaxWorkerThreads:       r.U16(),
		MinIOCompletionThreads: r.U16(),
		MaxIOCompletionThreads: r.U16(),
		ClrInstanceID:          r.U16(),
	}
	if !r.OK() {
		return ThreadPoolMinMaxThreads{}, short("ThreadPoolMinMaxThreads", version, len(payload))
	}
	return e, nil
}
