// Package hang owns the picture of a stuck process: what every thread is
// doing now and what it waits on, and the deadlocks among them. It is a
// state machine over *nettrace.Event with no I/O (clrspy stacks feeds it a
// short sample-profiler session, or a --watch session of lock and
// wait-handle events, and hands it what /proc says of each thread):
//
//   - the snapshot: the last ThreadSample of each thread (one managed stack
//     per thread, as dotnet-stack takes it), the thread events' managed ids
//     and flags (ThreadCreated, the rundown's ThreadDC), joined with the
//     kernel's state of every thread of the process (Task), each thread's
//     wait classified (Classify) from its top managed frames and its system
//     call, and threads with identical stacks grouped; each thread's whole
//     stack (Thread.MixedFrames) joins the caller's native walk (Task.Walk:
//     kernel and native frames) with its managed frames;
//   - the wait-for graph: open waits from ContentionStart/Stop (v2 names the
//     lock, its object and, on .NET 8+, the owner's OS thread id) and
//     WaitHandleWaitStart/Stop (.NET 9+), each lock's owner updated as
//     waiters acquire it, and the cycles of waits (thread A waits for a
//     lock B holds while B waits for one A holds): a deadlock once every
//     edge has been open for the threshold. Every wait that closes is
//     published as an analysis.Wait to the observers given in Options;
//   - suspicion without events: a process deadlocked before the session
//     began fires no contention event again, so two or more threads found
//     in Monitor.Enter with no thread able to release (none running) are
//     reported as a suspected deadlock, with the reason, owners unknown.
package hang
