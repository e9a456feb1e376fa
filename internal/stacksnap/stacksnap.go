package stacksnap

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/hang"
	"github.com/clrspy/clrspy/internal/cdac"
	"github.com/clrspy/clrspy/internal/procfs"
	"github.com/clrspy/clrspy/ipc"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/perf"
	"github.com/clrspy/clrspy/report"
	"github.com/clrspy/clrspy/source"
	"github.com/clrspy/clrspy/stacks"
)

// MaxSession bounds a snapshot's session when no sample arrives.
const MaxSession = 15 * time.Second

// DefaultSampleFor is how long the sampler runs after its first sample.
const DefaultSampleFor = 100 * time.Millisecond

// Providers: the sample profiler and method events to name its frames,
// the thread events for managed ids and roles (the rundown's ThreadDC
// lists every live thread at the stop), and the suspensions' bounds (what
// the sampling cost the target: Result.TargetPaused).
func Providers() []ipc.Provider {
	return ipc.Merge(stacks.SamplerProviders(), clrevents.ProvidersFor(hang.WantsSamples, suspensions))
}

// suspensions: a suspension's bounds, which gcpause pairs.
func suspensions(m *nettrace.Metadata) bool {
	return m.Runtime == nettrace.Runtime && (m.EventID == clrevents.IDGCSuspendEEBegin || m.EventID == clrevents.IDGCRestartEEEnd)
}

// WatchProviders: lock and wait-handle events with their stacks, and what
// names them (`stacks --watch`).
func WatchProviders() []ipc.Provider {
	return clrevents.ProvidersFor(hang.WantsWaits, stacks.SymbolsWant)
}

// Job is one snapshot (or watch) on a stream: its analyzers, then its
// result once the stream has ended.
type Job struct {
	a   *hang.Analyzer
	as  []analysis.Analyzer
	hdr *nettrace.Header
	sym *stacks.Symbols
}

// New makes the job's analyzers for st. A live snapshot (sampleFor > 0)
// stops st sampleFor after the first sample reaches it: by then every
// managed thread has been sampled (the profiler walks all of them once a
// millisecond).
func New(st *source.Stream, opts hang.Options, sampleFor time.Duration) *Job {
	sym := stacks.NewSymbols(st.Header())
	opts.Symbols = sym
	j := &Job{a: hang.New(st.Header(), opts), hdr: st.Header(), sym: sym}
	// The suspensions the sampling cost the target, paired by package
	// gcpause (its records bounded: only the pairing is read).
	gc := gcpause.New(st.Header(), gcpause.Options{MaxGCs: 1, MaxSuspensions: 1, OnStopped: j.a.Stopped})
	j.as = []analysis.Analyzer{sym, gc, j.a}
	if st.Live() && sampleFor > 0 {
		j.as = append(j.as, &firstSampleStop{st: st, after: sampleFor})
	}
	return j
}

// Analyzers are what the stream runs.
func (j *Job) Analyzers() []analysis.Analyzer { return j.as }

// Result is the job's result with the threads /proc lists for pid now
// (procPid 0: none, a trace file or a process outside clrspy's pid
// namespace).
func (j *Job) Result(procPid int) *hang.Result {
	var tasks []hang.Task
	var mem *hang.Memory
	var walkNote string
	if procPid > 0 {
		tasks = ReadTasks(procPid)
		walkNote = WalkTasks(procPid, tasks, j.hdr, j.sym)
		mem = ReadMemory(procPid, j.a.LockObjects())
	}
	r := j.a.ResultWithMemory(tasks, mem)
	if mem != nil && mem.Reason == "" {
		NameStatics(procPid, r)
	}
	if walkNote != "" {
		r.Notes = append(r.Notes, walkNote)
	}
	return r
}

// NameStatics names the lock objects of r that a static field of the
// waiting and holding threads' classes holds (package cdac).
func NameStatics(pid int, r *hang.Result) {
	var objs []uint64
	for _, t := range r.Threads {
		for _, s := range append([]string{waitObject(t.Wait)}, heldObjects(t.Holds)...) {
			var a uint64
			if _, err := fmt.Sscanf(s, "0x%x", &a); err == nil {
				objs = append(objs, a)
			}
		}
	}
	if len(objs) == 0 {
		return
	}
	names, err := cdac.NameStatics(pid, objs, hang.LockClasses(r))
	if err != nil {
		r.Notes = append(r.Notes, "the static fields holding the lock objects were not read: "+err.Error())
	}
	hang.NameObjects(r, names)
}

func waitObject(w *hang.Wait) string {
	if w == nil {
		return ""
	}
	return w.Object
}

func heldObjects(hs []hang.Held) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.Object
	}
	return out
}

// WalkTasks walks the native stack of each of pid's tasks as it is now
// (package perf: the kernel's frames, and the user stack of a thread in
// a system call, without stopping it), managed frames named by sym, and
// returns a note of what the walks cost.
func WalkTasks(pid int, tasks []hang.Task, hdr *nettrace.Header, sym *stacks.Symbols) string {
	t0 := time.Now()
	w, err := perf.NewWalker(pid, hdr, sym)
	if err != nil {
		why := fmt.Sprintf("no native stack: %v", err)
		for i := range tasks {
			tasks[i].Walk = &hang.Walk{Reason: why}
		}
		return ""
	}
	defer w.Close()
	walked := 0
	for i := range tasks {
		ts := w.Walk(int(tasks[i].Tid))
		hw := &hang.Walk{}
		for _, f := range ts.Kernel {
			hw.Kernel = append(hw.Kernel, f.Name+" [kernel]")
		}
		for _, f := range ts.User {
			hw.User = append(hw.User, hang.WalkFrame{Name: nativeName(f), Managed: f.Kind == stacks.KindManaged || f.Name == perf.AnonFrame})
		}
		switch {
		case ts.KernelReason != "" && ts.UserReason != "":
			hw.Reason = "no kernel frames: " + ts.KernelReason + "; no native frames: " + ts.UserReason
		case ts.KernelReason != "":
			hw.Reason = "no kernel frames: " + ts.KernelReason
		case ts.UserReason != "":
			hw.Reason = "no native frames: " + ts.UserReason
		}
		if len(ts.User) > 0 {
			walked++
			if ts.End != "" && ts.End != "outermost" {
				hw.Reason = strings.TrimPrefix(hw.Reason+"; ", "; ") + "the native walk stopped early (" + ts.End + ")"
			}
		}
		tasks[i].Walk = hw
	}
	return fmt.Sprintf("native and kernel frames of %d of %d threads walked from /proc (no thread stopped) in %.1f ms",
		walked, len(tasks), float64(time.Since(t0).Microseconds())/1e3)
}

// nativeName names a walked frame: managed ones as the sampler does,
// native ones with their module ("pthread_cond_wait [libc.so.6]").
func nativeName(f stacks.Frame) string {
	if f.Kind != stacks.KindNative || f.Module == "" || strings.HasPrefix(f.Name, f.Module+"+") || strings.HasPrefix(f.Name, "[") {
		return f.Name
	}
	return f.Name + " [" + f.Module + "]"
}

// ReadMemory is what pid's memory says of its locks now (package cdac:
// the sync blocks' holders, objs named), or why it cannot be read.
func ReadMemory(pid int, objs []uint64) *hang.Memory {
	t0 := time.Now()
	l, err := cdac.ReadLocks(pid, objs)
	if err != nil {
		return &hang.Memory{Reason: cdac.Unavailable(err)}
	}
	m := &hang.Memory{Types: l.Types, StackRefs: l.StackRefs, BlockedOn: l.BlockedOn, LockBlockedOn: l.LockBlockedOn, LockReason: l.LockErr, ManagedIDs: l.ManagedIDs, Note: fmt.Sprintf("lock owners read from the target's memory (.NET %s data descriptor: %d locks held or waited for) in %.1f ms, without pausing it",
		l.Runtime.Version, len(l.Held), float64(time.Since(t0).Microseconds())/1e3)}
	for _, h := range l.Held {
		m.Locks = append(m.Locks, hang.HeldLock{Object: h.Object, ObjectType: h.Type, OwnerOSTid: h.OwnerOSTid, Recursion: h.Recursion, Waiters: h.Waiters})
	}
	return m
}

// Snapshot runs a snapshot on the open live stream st (opened with
// Providers and a session bound such as MaxSession) to its end and
// returns its document; procPid is the process as /proc names it (0:
// not visible). The stream is left open for the caller to close.
func Snapshot(st *source.Stream, pid, procPid int, sampleFor time.Duration) (*report.StacksDocument, error) {
	j := New(st, hang.Options{}, sampleFor)
	end, err := st.Run(j.as...)
	if err != nil {
		return nil, err
	}
	var stats analysis.Stats
	for _, a := range j.as {
		stats.Add(a.Stats())
	}
	res := j.Result(procPid)
	d := &report.StacksDocument{
		Input:    report.NewInput(st.Name, st.Live(), end, stats),
		Pid:      pid,
		Result:   res,
		SampleMs: float64(st.Header().DurationNanos(end.LastTimestamp-end.FirstTimestamp)) / 1e6,
	}
	return d, nil
}

type firstSampleStop struct {
	st    *source.Stream
	after time.Duration
	once  sync.Once
}

func (f *firstSampleStop) Event(ev *nettrace.Event) {
	if ev.Meta.Runtime == nettrace.SampleProfiler {
		f.once.Do(func() { time.AfterFunc(f.after, f.st.Stop) })
	}
}

func (f *firstSampleStop) Stats() analysis.Stats { return analysis.Stats{} }

// ReadTasks is what the kernel says of every thread of pid now.
func ReadTasks(pid int) []hang.Task {
	tids, err := procfs.Threads(pid)
	if err != nil {
		return nil
	}
	out := make([]hang.Task, 0, len(tids))
	for _, tid := range tids {
		k := procfs.ReadTask(pid, tid)
		if k.State == 0 {
			continue // ended meanwhile
		}
		out = append(out, hang.Task{Tid: tid, Name: k.Name, State: k.State, Syscall: procfs.SyscallName(k.Syscall), Wchan: k.Wchan})
	}
	return out
}
