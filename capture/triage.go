package capture

import (
	"runtime"
	"sync"
	"time"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/internal/memread"
	"github.com/clrspy/clrspy/internal/procfs"
	"github.com/clrspy/clrspy/memory"
	"github.com/clrspy/clrspy/triage"
)

// NewTriage registers triage's analyses in a new Set: every area's light
// analyses, the thread-pool and exception analyses refining the
// counters' facts where the stream has their events. sid is the
// counters' meter session (CounterSessionID; "": a file's, any).
func NewTriage(sid string) (*analysis.Set, *triage.Analyzer) {
	s := analysis.NewSet()
	return s, triage.Register(s, TriageOptions(sid))
}

// TriageOptions are the options of triage's analyses wherever a stream is
// judged as clrspy triage judges it (NewTriage's; the report page's, which
// adds NoProfile and Uncounted to register them in its own Set): one set
// of facts, so one judgement.
func TriageOptions(sid string) triage.Options {
	return triage.Options{CounterSessionID: sid, Refine: true}
}

// Window is what a live triage window collects from /proc beside its
// events while it lasts: the CPU its process's threads ran or waited
// runnable (schedstat, every 500 ms), the busiest of them, and its memory
// split (package memory) with its cgroup. End hands them to the
// analyzer.
type Window struct {
	o     WindowOptions
	sched *procfs.DemandSampler

	// The memory split's readings (o.SplitPid > 0).
	mu           sync.Mutex
	first        memory.Sample
	ss           []memory.Sample
	limit, usage uint64
	stop, done   chan struct{}
}

// WindowOptions say where a window reads.
type WindowOptions struct {
	// Pid is the process in clrspy's pid namespace for its threads'
	// schedstat (0: not visible; the window has no CPU demand).
	Pid int
	// SplitPid is the process whose memory split is read (0: none); a
	// launched program's start-up grows its native heap and loader heaps
	// from nothing, not a trend to judge.
	SplitPid int
	// Every is how often the window reads the split between its first
	// and last readings (0: it does not; Ring has the readings).
	Every time.Duration
	// Ring, when set, gives the split's readings someone else takes
	// (serve's, every MemoryInterval): those after the window's first.
	Ring func() []memory.Sample
	// Epoch is when the readings' AtNs count from (zero: the window's
	// start): Ring's.
	Epoch time.Time
}

// StartWindow starts reading; End stops.
func StartWindow(o WindowOptions) *Window {
	if o.Epoch.IsZero() {
		o.Epoch = time.Now()
	}
	w := &Window{o: o}
	if o.Pid > 0 {
		w.sched = procfs.StartThreadDemand(o.Pid, 500*time.Millisecond)
	}
	if o.SplitPid <= 0 {
		return w
	}
	w.read()
	if len(w.ss) > 0 {
		w.first = w.ss[0]
	}
	if o.Every <= 0 {
		return w
	}
	w.stop, w.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(w.done)
		tk := time.NewTicker(o.Every)
		defer tk.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-tk.C:
				w.read()
			}
		}
	}()
	return w
}

// ReadMemory is pid's memory split now (smaps and its threads' stack
// pointers, no runtime session) as a sample timed from epoch, and its
// memory cgroup (nil: none visible).
func ReadMemory(pid int, epoch time.Time) (memory.Sample, *procfs.CgroupMemory, error) {
	sp, cg, err := memread.Read(pid, memory.Hints{})
	if err != nil {
		return memory.Sample{}, nil, err
	}
	s := memory.Sample{AtNs: int64(time.Since(epoch)), Split: sp}
	if cg != nil {
		s.CgroupUsage = cg.Usage
	}
	return s, cg, nil
}

// read takes one reading of the split.
func (w *Window) read() {
	s, cg, err := ReadMemory(w.o.SplitPid, w.o.Epoch)
	if err != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if cg != nil {
		w.limit, w.usage = cg.Limit, cg.Usage
	}
	w.ss = append(w.ss, s)
}

// Memory is the memory split's readings End judged (oldest first; none
// before End, or without SplitPid), the time their AtNs count from, and
// the cgroup's limit and usage at the last (limit 0: none): the report
// page's memory section.
func (w *Window) Memory() (ss []memory.Sample, epoch time.Time, limit, usage uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stop != nil {
		select {
		case <-w.done:
		default:
			return nil, w.o.Epoch, 0, 0 // still reading
		}
	}
	return w.ss, w.o.Epoch, w.limit, w.usage
}

// End stops the window and gives a what it collected: the machine's
// cores and the threads' CPU demand over the window, and the busiest
// thread, named by name (nil: /proc's comm now). It returns the memory
// split's facts for Facts.Memory.Split (nil: none read; with Ring, the
// first failed): the readings and one last now.
func (w *Window) End(a *triage.Analyzer, name func(tid uint64) string) *triage.SplitFacts {
	cores, demand := runtime.NumCPU(), -1.0
	if w.sched != nil {
		demand = w.sched.Pct(cores)
	}
	a.SetCPU(cores, demand)
	if w.sched != nil {
		if tid, pct := w.sched.Busiest(); pct > 0 {
			if name == nil {
				name = func(tid uint64) string { return procfs.Comm(w.o.Pid, tid) }
			}
			a.SetBusiestThread(tid, name(tid), pct)
		}
	}
	if w.o.SplitPid <= 0 {
		return nil
	}
	if w.stop != nil {
		close(w.stop)
		<-w.done
	}
	if w.o.Ring != nil {
		if len(w.ss) == 0 {
			return nil // the first reading failed: no window to judge
		}
		var later []memory.Sample
		for _, s := range w.o.Ring() {
			if s.AtNs > w.first.AtNs {
				later = append(later, s)
			}
		}
		w.ss = append(w.ss[:1], later...)
	}
	w.read()
	return triage.SplitOf(w.ss, w.limit, w.usage)
}
