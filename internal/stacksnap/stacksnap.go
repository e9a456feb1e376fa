package stacksnap

import (
	"fmt"
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
	a  *hang.Analyzer
	as []analysis.Analyzer
}

// New makes the job's analyzers for st. A live snapshot (sampleFor > 0)
// stops st sampleFor after the first sample reaches it: by then every
// managed thread has been sampled (the profiler walks all of them once a
// millisecond).
func New(st *source.Stream, opts hang.Options, sampleFor time.Duration) *Job {
	sym := stacks.NewSymbols(st.Header())
	opts.Symbols = sym
	j := &Job{a: hang.New(st.Header(), opts)}
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
	if procPid > 0 {
		tasks = ReadTasks(procPid)
		mem = ReadMemory(procPid, j.a.LockObjects())
	}
	return j.a.ResultWithMemory(tasks, mem)
}

// ReadMemory is what pid's memory says of its locks now (package cdac:
// the sync blocks' holders, objs named), or why it cannot be read.
func ReadMemory(pid int, objs []uint64) *hang.Memory {
	t0 := time.Now()
	l, err := cdac.ReadLocks(pid, objs)
	if err != nil {
		return &hang.Memory{Reason: cdac.Unavailable(err)}
	}
	m := &hang.Memory{Types: l.Types, StackRefs: l.StackRefs, BlockedOn: l.BlockedOn, Note: fmt.Sprintf("lock owners read from the target's memory (.NET %s data descriptor: %d locks held or waited for) in %.1f ms, without pausing it",
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
