// Package threadpool owns the thread-pool analysis: how many worker
// threads the runtime's pool had, how long its queue grew, why it injected
// threads, when it starved, and what its threads were blocked on meanwhile.
// It is a state machine over *nettrace.Event with no I/O, equally fed from
// a live session or a file.
//
// Its inputs are the runtime's thread-pool events (Threading keyword:
// ThreadPoolWorkerThreadStart/Stop/Wait with the pool's thread count,
// ThreadPoolWorkerThreadAdjustmentSample/Adjustment/Stats from the
// hill-climbing algorithm, ThreadPoolMinMaxThreads), the runtime's counters
// (threadpool-queue-length, threadpool-thread-count, completed items;
// package counters reads them, the caller hands them as Options.Counters,
// an analysis.Counters), the WaitHandleWaitStart/Stop events
// (WaitHandle keyword, .NET 9+) and the contention events with their
// stacks, and, where those are missing (.NET 8), the sample profiler's
// stacks of threads in blocking frames.
//
// A starvation episode starts at the first injection whose reason says the
// pool's threads were blocked (starvation: the gate thread found no
// progress; cooperative blocking: a pool thread blocked in Task.Wait), or
// at the second counter interval in a row in which the queue grew while no
// worker parked. It ends when a worker parks (ThreadPoolWorkerThreadWait:
// the pool has more threads than its target, so threads it injected for
// run again) or the queue counter reads 0, unless the pool injects another
// thread for blocked threads within 500 ms: measured on .NET 10, workers
// also park in the middle of a sync-over-async burst, while other pool
// threads are still blocked. When the stream has WaitHandle events and no
// pool thread is in a wait, the end is final at once. An injection within
// 100 ms of a worker parking starts no episode, and episodes shorter than
// 100 ms are counted, not listed (a single Task.Wait makes the pool inject
// a thread without starving it).
//
// Blocking sites are resolved when the Result is made (stacks are kept as
// addresses until then): each blocking wait of a pool thread is charged to
// the first frame of application code above the wait (not System.*,
// Microsoft.*, native or unknown code), with the framework call it made;
// a wait under Task.Wait, Task.Result or GetAwaiter().GetResult() is
// sync-over-async.
package threadpool
