// Package locks owns the lock-contention analysis: it pairs the runtime's
// ContentionStart/ContentionStop events per thread and answers which lock
// was contended, how long threads waited for it, behind which owner thread
// and from which code. It is a state machine over *nettrace.Event with no
// I/O, equally fed from a live session or a file.
//
// The owner a ContentionStart v2 reports (LockOwnerThreadID) is documented
// both as the owner's OS thread id and as the address of the runtime's
// Thread object; every runtime measured (.NET 8, 9 and 10, docs/locks.md)
// writes the OS thread id. The analyzer accepts either, and managed thread
// ids too: it collects the thread events (ThreadCreated, rundown ThreadDC)
// and the OS thread ids it sees, and resolves each owner value at the end,
// saying how it mapped it or that it could not.
package locks
