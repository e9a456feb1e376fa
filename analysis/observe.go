package analysis

// Facts one analysis owns and others need. An analysis never imports
// another: the owner publishes these values and a composer (a Set, or a
// command's wiring) hands them to every analysis that implements the
// matching observer interface. Times are nanoseconds since the stream's
// start (nettrace.Header.Nanos), threads are OS thread ids as events carry
// them.

// Stopped is one runtime suspension, paired once (package gcpause owns the
// pairing of SuspendEEBegin with RestartEEEnd): the interval during which
// managed code did not run.
type Stopped struct {
	Thread uint64 // the thread that suspended the runtime
	// Reason is the runtime's suspend reason (clrevents.SuspendReason).
	Reason uint32
	// GC is the runtime's number of the GC this suspension belongs to (0:
	// not a GC's).
	GC uint32
	// HeapDump marks the GC that a heap snapshot induced (the tool's own,
	// not the application's).
	HeapDump   bool
	BeginNanos int64
	EndNanos   int64
}

// StoppedObserver is an analysis that wants every completed suspension.
type StoppedObserver interface {
	Stopped(*Stopped)
}

// WaitKind says what a thread waited on.
type WaitKind uint8

// Wait kinds.
const (
	WaitLock       WaitKind = iota + 1 // Monitor / System.Threading.Lock contention
	WaitHandle                         // WaitHandle.Wait, Task.Wait and the like (.NET 9+ events)
	WaitThreadPool                     // a pool thread blocked (sampled stacks)
)

// Wait is one interval during which a thread waited (package locks owns
// lock waits, package threadpool wait-handle waits).
type Wait struct {
	Thread     uint64
	Kind       WaitKind
	Object     uint64 // the lock or wait object's address when known (0: unknown)
	Owner      uint64 // the owning thread when known (0: unknown)
	BeginNanos int64
	EndNanos   int64
}

// WaitObserver is an analysis that wants every completed wait.
type WaitObserver interface {
	Wait(*Wait)
}

// Counters is the runtime's counters as the analysis that decodes them
// reads them (package counters owns the EventCounters and the meter's
// series and their semantic-convention names), for an analysis that needs
// a few of their values (threadpool: the queue length, the thread count,
// completed work items per second). Its Stats count the counter events
// read so far, so a reader knows when new values arrived.
type Counters interface {
	Analyzer
	// Read sets out[i] to the current value of the metric named names[i]
	// (one reading of them all; len(out) >= len(names)).
	Read(names []string, out []CounterValue)
}

// CounterValue is one metric's value in a Counters reading.
type CounterValue struct {
	Value float64
	// Rate is a counter's increase per second over the last interval
	// (HasRate false when the metric has none yet).
	Rate    float64
	HasRate bool
	OK      bool // false: no such metric (yet)
}
