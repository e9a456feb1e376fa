package hang

import "strings"

// Wait kinds (Wait.Kind): what a thread waits on.
const (
	KindMonitor    = "monitor"     // Monitor.Enter (lock statement on an object)
	KindLock       = "lock"        // System.Threading.Lock
	KindWaitHandle = "wait_handle" // WaitHandle.WaitOne, Task.Wait, Monitor.Wait, Join, slim events
	KindSleep      = "sleep"       // Thread.Sleep
	KindIO         = "io"          // a socket, pipe, file or console read; disk wait
	KindPoolIdle   = "pool_idle"   // a thread-pool worker waiting for work
	KindFutex      = "futex"       // native code blocked on a futex (no managed frame says why)
	KindOther      = "other"       // blocked in a system call that says nothing more
)

// Thread kinds (Thread.Kind).
const (
	ThreadPoolWorker = "pool_worker"
	ThreadPoolIO     = "pool_io"
	ThreadFinalizer  = "finalizer"
	ThreadGC         = "gc"
	ThreadOther      = "other"
)

// frameRule maps a managed frame's name (its prefix, without arguments) to
// a wait kind. The first rule matching one of a stack's top frames wins;
// rules are tried frame by frame from the leaf.
type frameRule struct {
	prefix string
	kind   string
}

// The first five are the locks' (Classify tries them first).
var frameRules = []frameRule{
	{"System.Threading.Monitor.Enter", KindMonitor},
	{"System.Threading.Monitor.ReliableEnter", KindMonitor},
	{"System.Threading.Monitor.TryEnter", KindMonitor},
	{"System.Threading.Lock.Enter", KindLock},
	{"System.Threading.Lock.TryEnter", KindLock},
	{"System.Threading.Thread.Sleep", KindSleep},
	{"System.Threading.LowLevelLifoSemaphore.", KindPoolIdle},
	{"System.Threading.PortableThreadPool+WorkerThread.WorkerDoWork", KindPoolIdle},
	{"System.Threading.WaitHandle.Wait", KindWaitHandle},
	{"System.Threading.Monitor.Wait", KindWaitHandle},
	{"System.Threading.ManualResetEventSlim.Wait", KindWaitHandle},
	{"System.Threading.SemaphoreSlim.Wait", KindWaitHandle},
	{"System.Threading.CountdownEvent.Wait", KindWaitHandle},
	{"System.Threading.Barrier.SignalAndWait", KindWaitHandle},
	{"System.Threading.Thread.Join", KindWaitHandle},
	{"System.Threading.Tasks.Task.Wait", KindWaitHandle},
	{"System.Threading.Tasks.Task.InternalWait", KindWaitHandle},
	{"System.Threading.Tasks.Task.SpinThenBlockingWait", KindWaitHandle},
	{"System.Net.Sockets.", KindIO},
	{"System.IO.Pipes.", KindIO},
	{"System.IO.Strategies.", KindIO},
	{"System.IO.FileStream.", KindIO},
	{"System.IO.StreamReader.Read", KindIO},
	{"System.ConsolePal", KindIO},
	{"Interop+Sys.Read", KindIO},
	{"Interop+Sys.Poll", KindIO},
	{"Interop+Sys.Recv", KindIO},
	{"Interop+Sys.Accept", KindIO},
}

// syncOverAsync are frames that block a thread on a task's completion.
var syncOverAsync = []string{
	"System.Threading.Tasks.Task.Wait", "System.Threading.Tasks.Task.InternalWait",
	"System.Threading.Tasks.Task`1.get_Result", "System.Runtime.CompilerServices.TaskAwaiter",
	"System.Threading.Tasks.Task.SpinThenBlockingWait", "System.Threading.Tasks.Task`1.GetResultCore",
}

// classifyDepth is how many frames from the leaf the rules look at: a
// wait's own frames are at the top; deeper, an application frame that
// happens to match (a method named Sleep) would mislead.
const classifyDepth = 8

// Classify says what a thread waits on from its managed frames (leaf
// first, named as stacks.Symbols names them) and the kernel's state
// (Task.State, the system call's name): nil for a running thread. The
// frame rules win over the kernel: every blocked thread sleeps in a futex,
// the frames say why.
func Classify(frames []string, state byte, syscall string) *Wait {
	// A lock's slow path waits on a wait handle of its own (.NET 9+'s
	// System.Threading.Lock): the lock's frame below it says what for.
	for i, f := range frames {
		if i == classifyDepth {
			break
		}
		for _, r := range frameRules[:5] {
			if strings.HasPrefix(f, r.prefix) {
				return &Wait{Kind: r.kind, Frame: f}
			}
		}
	}
	for i, f := range frames {
		if i == classifyDepth {
			break
		}
		for _, r := range frameRules {
			if strings.HasPrefix(f, r.prefix) {
				w := &Wait{Kind: r.kind, Frame: f}
				if r.kind == KindWaitHandle {
					w.SyncOverAsync = hasPrefix(frames, syncOverAsync)
				}
				return w
			}
		}
	}
	switch state {
	case 'R':
		return nil
	case 'D':
		return &Wait{Kind: KindIO, Frame: "[disk wait]"}
	case 0:
		return &Wait{Kind: KindOther}
	}
	switch syscall {
	case "futex":
		return &Wait{Kind: KindFutex}
	case "read", "readv", "pread64", "recvfrom", "recvmsg", "poll", "ppoll", "select", "pselect6",
		"epoll_wait", "epoll_pwait", "epoll_pwait2", "accept", "accept4":
		return &Wait{Kind: KindIO}
	case "nanosleep", "clock_nanosleep":
		return &Wait{Kind: KindSleep}
	}
	return &Wait{Kind: KindOther}
}

func hasPrefix(frames, prefixes []string) bool {
	for i, f := range frames {
		if i == classifyDepth {
			break
		}
		for _, p := range prefixes {
			if strings.HasPrefix(f, p) {
				return true
			}
		}
	}
	return false
}

// threadKind names a thread's role from the runtime's flags (ThreadCreated)
// and the name the runtime gave its OS thread.
func threadKind(flags uint32, known bool, comm string) string {
	switch {
	case known && flags&4 != 0, strings.HasPrefix(comm, ".NET TP Worker"):
		return ThreadPoolWorker
	case known && flags&2 != 0, comm == ".NET Finalizer":
		return ThreadFinalizer
	case known && flags&1 != 0, strings.HasPrefix(comm, ".NET BGC"), strings.HasPrefix(comm, ".NET Server GC"), strings.HasPrefix(comm, ".NET GC"):
		return ThreadGC
	case strings.HasPrefix(comm, ".NET TP IO"), strings.HasPrefix(comm, ".NET Sockets"), strings.HasPrefix(comm, ".NET TP Wait"):
		return ThreadPoolIO
	}
	return ThreadOther
}
