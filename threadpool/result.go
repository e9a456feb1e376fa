package threadpool

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/stacks"
)

// TopSites is how many blocking sites a Result lists in full (the others
// are summed in Summary).
const TopSites = 50

// Result is the analysis so far. Times are nanoseconds since the first
// event of the stream.
type Result struct {
	Summary Summary
	// Timeline has one row per second of the stream.
	Timeline []Point
	// Adjustments are the pool's target changes, in order (injections are
	// those with To > From).
	Adjustments []Adjustment
	// InjectionsByReason counts the injections per reason name.
	InjectionsByReason map[string]int
	Episodes           []Episode
	// Sites are the blocking sites of pool threads, most blocked first.
	Sites []Site
	// Stacks are the stacks Sites and Blocked refer to (index 0: none).
	Stacks []Stack
	// Blocked aggregates blocking time per stack (pool threads only), for
	// a pprof profile.
	Blocked []StackBlocked
	Notes   []string
}

// Summary totals the stream.
type Summary struct {
	SpanNs       int64
	ThreadsMax   int  // the most worker threads the pool had (events or counters)
	HasThreads   bool // some event or counter told the thread count
	QueueMax     float64
	HasQueue     bool // the runtime's queue-length counter was in the stream
	MinWorkers   int  // ThreadPoolMinMaxThreads (0: not in the stream)
	MaxWorkers   int
	WorkerStarts int
	WorkerStops  int
	WorkerWaits  int
	Adjustments  int
	Injections   int
	Episodes     int
	// BriefEpisodes counts episodes that ended within 100 ms (not listed).
	BriefEpisodes int
	// BlockedNs and Waits total the pool threads' blocking (every site).
	BlockedNs int64
	Waits     int64
	// Source says where the blocking sites come from: "wait-handle"
	// (WaitHandle events, .NET 9+; with Monitor contention), "contention",
	// "samples" (sampler stacks), or "" when the stream has none.
	Source string
	// AllThreads: no blocking wait was on a pool thread; the sites are
	// every thread's.
	AllThreads        bool
	WaitHandleWaits   int
	ContentionWaits   int
	StackSamples      int
	DroppedAdjustment int
	DroppedEpisodes   int
	DroppedTimeline   int
	DecodeErrors      uint64
}

// Point is one second of the timeline; -1: nothing told the value in it.
type Point struct {
	Second     int
	Threads    int     // the most worker threads in the second
	Queue      float64 // the queue-length counter
	Throughput float64 // the hill climbing's completions per second
	Completed  float64 // completed work items per second (counters)
	Injections int
}

// Adjustment is one change of the pool's target thread count.
type Adjustment struct {
	AtNs              int64
	From, To          int
	Reason            string // "starvation", "cooperative_blocking", ...
	Code              uint32
	AverageThroughput float64
}

// Episode is one starvation episode.
type Episode struct {
	StartNs, EndNs int64
	// Ended is false for an episode still open when the stream ended
	// (EndNs is then the last event).
	Ended         bool
	Trigger       string // what started it
	EndedBy       string // what ended it
	ThreadsBefore int
	ThreadsAfter  int
	ThreadsMax    int
	Injections    int
	QueueMax      float64 // -1 without the queue counter
}

// DurationNs is the episode's length.
func (e *Episode) DurationNs() int64 { return e.EndNs - e.StartNs }

// Site is the blocking done from one application call site.
type Site struct {
	// Site is the first application frame above the wait
	// ("MyApp.Orders.Get"); "[framework]" + the first frame otherwise.
	Site string
	// Calls is the framework method the site called that blocked
	// ("System.Threading.Tasks.Task.Wait").
	Calls string
	// Stack is the stack that blocked longest from the site (Stacks index).
	Stack         int
	BlockedNs     int64
	Waits         int64
	SyncOverAsync bool
	Kind          string // "wait-handle", "monitor", "samples"
}

// StackBlocked is the blocking of pool threads under one stack.
type StackBlocked struct {
	Stack     int
	Waits     int64
	BlockedNs int64
	Kind      string
}

// Stack is one stack, leaf first.
type Stack struct {
	IPs     []uint64
	Frames  []string
	Modules []string
}

var kindNames = [numKinds]string{"wait-handle", "monitor", "samples"}

// Result builds the analysis so far; it may be called again later.
func (a *Analyzer) Result() *Result {
	if a.ctrDirty {
		a.counterSnapshot()
	}
	r := &Result{InjectionsByReason: map[string]int{}}
	s := &r.Summary
	if a.seenAny {
		s.SpanNs = a.hdr.DurationNanos(a.lastTS - a.firstTS)
	}
	s.ThreadsMax, s.HasThreads = a.threadsMax, a.hasThreads || a.hasCounter
	s.QueueMax, s.HasQueue = a.queueMax, a.hasQueue
	if a.hasMinMax {
		s.MinWorkers, s.MaxWorkers = int(a.minMax.MinWorkerThreads), int(a.minMax.MaxWorkerThreads)
	}
	s.WorkerStarts, s.WorkerStops, s.WorkerWaits = a.workerStarts, a.workerStops, a.workerWaits
	s.Adjustments = len(a.adjustments) + a.droppedAdjust
	s.Injections = a.injections
	s.WaitHandleWaits, s.ContentionWaits, s.StackSamples = a.waitsSeen[KindWaitHandle], a.waitsSeen[KindMonitor], a.waitsSeen[KindSample]
	s.DroppedAdjustment, s.DroppedEpisodes, s.DroppedTimeline = a.droppedAdjust, a.droppedEpisodes, a.droppedTimeline
	s.DecodeErrors = a.Stats().DecodeErrors
	for k, n := range a.injectByReason {
		r.InjectionsByReason[k.String()] = n
	}
	r.Timeline = slices.Clone(a.timeline)
	r.Adjustments = slices.Clone(a.adjustments)
	r.Episodes = slices.Clone(a.episodes)
	if a.open != nil && a.hasPendingEnd && a.pendingEnd-a.open.StartNs < minEpisodeNs {
		// Ended (the stream stopped within the grace) before it was one.
		r.Episodes = r.Episodes[:len(r.Episodes)-1]
	}
	for i := range r.Episodes {
		e := &r.Episodes[i]
		switch {
		case e.Ended:
		case a.hasPendingEnd && &a.episodes[i] == a.open:
			// The stream ended within the grace after the end.
			e.EndNs, e.Ended, e.EndedBy, e.ThreadsAfter = a.pendingEnd, true, a.pendingWhy, a.pendingThreads
		default:
			e.EndNs = a.ns(a.lastTS)
			e.ThreadsAfter = a.threads
			e.EndedBy = "still starving when the stream ended"
		}
		if !a.hasQueue {
			e.QueueMax = -1
		}
	}
	s.Episodes = len(r.Episodes) + a.droppedEpisodes
	s.BriefEpisodes = a.briefEpisodes
	a.sites(r)
	r.Notes = a.notes(r)
	return r
}

// sites names the stacks and charges each blocking wait of a pool thread
// to its call site.
func (a *Analyzer) sites(r *Result) {
	s := &r.Summary
	// The source: wait events when the stream has any (exact waits), else
	// the sampler's stacks.
	useWaits := a.waitsSeen[KindWaitHandle]+a.waitsSeen[KindMonitor] > 0
	switch {
	case a.waitsSeen[KindWaitHandle] > 0:
		s.Source = "wait-handle"
	case a.waitsSeen[KindMonitor] > 0 && a.waitsSeen[KindSample] == 0:
		s.Source = "contention"
	case a.waitsSeen[KindSample] > 0:
		s.Source, useWaits = "samples", false
	}
	if s.Source == "" {
		return
	}
	names := make([][]stacks.Frame, len(a.stk.Stacks))
	name := func(id int32) []stacks.Frame {
		if names[id] == nil && id > 0 {
			ips := a.stk.Stacks[id]
			if a.sym != nil {
				names[id], _ = a.sym.Stack(ips, a.hdr.Nanos(a.stk.TS[id]))
			} else {
				fs := make([]stacks.Frame, len(ips))
				for i, ip := range ips {
					fs[i] = stacks.Frame{Name: fmt.Sprintf("0x%x", ip), Kind: stacks.KindUnknown}
				}
				names[id] = fs
			}
		}
		return names[id]
	}
	type siteAcc struct {
		Site
		best int64 // ns of the site's longest stack
	}
	bySite := map[string]*siteAcc{}
	used := map[int32]int{} // stack id → Result.Stacks index
	stackIndex := func(id int32) int {
		if i, ok := used[id]; ok {
			return i
		}
		if len(r.Stacks) == 0 {
			r.Stacks = append(r.Stacks, Stack{})
		}
		if id == 0 {
			used[id] = 0
			return 0
		}
		fs := name(id)
		st := Stack{IPs: a.stk.Stacks[id], Frames: make([]string, len(fs)), Modules: make([]string, len(fs))}
		for i, f := range fs {
			st.Frames[i], st.Modules[i] = f.Name, f.Module
		}
		used[id] = len(r.Stacks)
		r.Stacks = append(r.Stacks, st)
		return used[id]
	}
	// Keys in a stable order, so equal inputs give equal results.
	keys := slices.SortedFunc(maps.Keys(a.aggs), func(x, y aggKey) int {
		if x.stack != y.stack {
			return int(x.stack - y.stack)
		}
		if x.kind != y.kind {
			return int(x.kind) - int(y.kind)
		}
		if x.pool == y.pool {
			return 0
		}
		if x.pool {
			return 1
		}
		return -1
	})
	perStack := map[[2]int32]*StackBlocked{}
	// Waits of pool threads only; a stream where none is on a pool thread
	// (a program that blocks its own threads) shows every thread's.
	allThreads := true
	for _, k := range keys {
		if (k.kind == KindSample) != useWaits && (k.pool || onPoolThread(name(k.stack))) {
			allThreads = false
			break
		}
	}
	if allThreads {
		s.AllThreads = true
	}
	for _, k := range keys {
		if (k.kind == KindSample) == useWaits {
			continue
		}
		g := a.aggs[k]
		fs := name(k.stack)
		pool := k.pool || onPoolThread(fs)
		if !pool && !allThreads {
			continue
		}
		c := classify(fs)
		if k.kind == KindSample && !c.blocking {
			continue // a running thread, or an idle worker waiting for work
		}
		if c.idle {
			continue // the pool's own wait for work
		}
		s.BlockedNs += g.ns
		s.Waits += g.count
		kind := kindNames[k.kind]
		acc := bySite[c.site]
		if acc == nil {
			acc = &siteAcc{Site: Site{Site: c.site, Calls: c.calls, Kind: kind}}
			bySite[c.site] = acc
		}
		acc.BlockedNs += g.ns
		acc.Waits += g.count
		acc.SyncOverAsync = acc.SyncOverAsync || c.syncOverAsync
		if g.ns > acc.best || acc.Stack == 0 && k.stack != 0 {
			acc.best = g.ns
			acc.Stack = stackIndex(k.stack)
			acc.Calls = c.calls
		}
		pk := [2]int32{k.stack, int32(k.kind)}
		b := perStack[pk]
		if b == nil {
			b = &StackBlocked{Stack: stackIndex(k.stack), Kind: kind}
			perStack[pk] = b
		}
		b.Waits += g.count
		b.BlockedNs += g.ns
	}
	for _, acc := range bySite {
		r.Sites = append(r.Sites, acc.Site)
	}
	slices.SortFunc(r.Sites, func(x, y Site) int {
		if x.BlockedNs != y.BlockedNs {
			if x.BlockedNs > y.BlockedNs {
				return -1
			}
			return 1
		}
		return strings.Compare(x.Site, y.Site)
	})
	if len(r.Sites) > TopSites {
		r.Sites = r.Sites[:TopSites]
	}
	for _, b := range perStack {
		r.Blocked = append(r.Blocked, *b)
	}
	slices.SortFunc(r.Blocked, func(x, y StackBlocked) int {
		if x.BlockedNs != y.BlockedNs {
			if x.BlockedNs > y.BlockedNs {
				return -1
			}
			return 1
		}
		return x.Stack - y.Stack
	})
}

func (a *Analyzer) notes(r *Result) []string {
	var n []string
	s := &r.Summary
	if a.workerStarts+a.workerStops+a.workerWaits+len(a.adjustments) == 0 && !a.hasCounter {
		n = append(n, "no thread-pool events or counters in the stream (record with the Threading keyword 0x10000 and System.Runtime counters)")
	}
	if !a.hasQueue {
		n = append(n, "no queue-length counter in the stream: starvation is found from the pool's injections only")
	}
	switch s.Source {
	case "":
		n = append(n, "no blocking waits in the stream: WaitHandle events (.NET 9+, keyword 0x40000000000 with stacks) or stack samples name the blocking sites")
	case "samples":
		n = append(n, "blocking sites from stack samples (no WaitHandle events: .NET 8 or earlier, or not recorded): blocked time is estimated from the sampling intervals")
	case "contention":
		n = append(n, "blocking sites from lock contention only (no WaitHandle events: .NET 8 or earlier, or not recorded)")
	}
	if s.AllThreads && s.Waits > 0 {
		n = append(n, "no blocking wait was on a thread-pool thread: the blocking sites are those of every thread")
	}
	if a.sym == nil && len(r.Sites) > 0 {
		n = append(n, "stacks are not symbolized: sites are addresses")
	}
	if a.unpaired > 0 {
		n = append(n, fmt.Sprintf("%d waits had no stop event (lost)", a.unpaired))
	}
	if s.DroppedAdjustment+s.DroppedEpisodes+s.DroppedTimeline > 0 {
		n = append(n, fmt.Sprintf("bounds reached: %d adjustments, %d episodes, %d timeline seconds counted but not listed",
			s.DroppedAdjustment, s.DroppedEpisodes, s.DroppedTimeline))
	}
	return n
}

// frameClass is what a stack says about a wait.
type frameClass struct {
	site          string
	calls         string
	syncOverAsync bool
	blocking      bool // a blocking primitive is on the stack below the site
	idle          bool // the pool's own wait for work, no application frame
}

// blockingFrames are the framework methods a blocked thread sits in
// (prefixes of the frame name without arguments).
var blockingFrames = []string{
	"System.Threading.Tasks.Task.Wait", "System.Threading.Tasks.Task.InternalWait",
	"System.Threading.Tasks.Task.SpinThenBlockingWait", "System.Threading.Tasks.Task`1.get_Result",
	"System.Threading.Tasks.Task`1.GetResultCore", "System.Runtime.CompilerServices.TaskAwaiter",
	"System.Threading.ManualResetEventSlim.Wait", "System.Threading.SemaphoreSlim.Wait",
	"System.Threading.Monitor.Wait", "System.Threading.Monitor.Enter", "System.Threading.Monitor.ReliableEnter",
	"System.Threading.Lock.Enter", "System.Threading.Lock.EnterAndGetCurrentThreadId",
	"System.Threading.WaitHandle.Wait", "System.Threading.Thread.Sleep", "System.Threading.Thread.Join",
	"System.Threading.SpinWait.SpinOnce", "System.Threading.CountdownEvent.Wait", "System.Threading.Barrier.SignalAndWait",
	"System.Threading.ReaderWriterLockSlim", "System.Threading.Mutex", "System.Threading.LowLevel",
}

// syncOverAsyncFrames wait on a Task from synchronous code.
var syncOverAsyncFrames = []string{
	"System.Threading.Tasks.Task.Wait", "System.Threading.Tasks.Task.InternalWait",
	"System.Threading.Tasks.Task`1.get_Result", "System.Threading.Tasks.Task`1.GetResultCore",
	"System.Runtime.CompilerServices.TaskAwaiter", "System.Threading.Tasks.Task.WaitAll", "System.Threading.Tasks.Task.WaitAny",
}

func bare(name string) string {
	if i := strings.IndexByte(name, '('); i >= 0 {
		return name[:i]
	}
	return name
}

func hasPrefix(name string, list []string) bool {
	for _, p := range list {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// isFramework reports whether f is not application code.
func isFramework(f stacks.Frame) bool {
	if f.Kind != stacks.KindManaged {
		return true
	}
	mod := f.Module
	if mod == "" {
		return strings.HasPrefix(f.Name, "System.") || strings.HasPrefix(f.Name, "Microsoft.") || strings.HasPrefix(f.Name, "Internal.")
	}
	return strings.HasPrefix(mod, "System.") || strings.HasPrefix(mod, "Microsoft.") ||
		mod == "mscorlib.dll" || mod == "netstandard.dll"
}

// generatedSite names a runtime-generated site by what calls it (the
// first managed frame rootward: an MVC action invoker, a minimal API's
// request delegate), since the application method it stands for may be
// inlined into it.
func generatedSite(name string, callers []stacks.Frame) string {
	for _, f := range callers {
		if f.Kind == stacks.KindManaged && !stacks.RuntimeGenerated(bare(f.Name)) {
			return name + " [runtime-generated, called by " + bare(f.Name) + "]"
		}
	}
	return name + " [runtime-generated]"
}

// onPoolThread reports whether a stack runs on a pool worker (its root
// frames are the pool's dispatch loop).
func onPoolThread(fs []stacks.Frame) bool {
	for i := len(fs) - 1; i >= 0; i-- {
		n := fs[i].Name
		// Not the gate thread (PortableThreadPool+GateThread): it is the
		// pool's watchdog, waiting by design.
		if strings.Contains(n, "PortableThreadPool+WorkerThread") || strings.Contains(n, "ThreadPoolWorkQueue.Dispatch") {
			return true
		}
	}
	return false
}

func classify(fs []stacks.Frame) frameClass {
	var c frameClass
	for i, f := range fs {
		n := bare(f.Name)
		if !isFramework(f) {
			c.site = n
			if stacks.RuntimeGenerated(n) {
				c.site = generatedSite(n, fs[i+1:])
			}
			if i > 0 {
				c.calls = bare(fs[i-1].Name)
			}
			return c
		}
		if hasPrefix(n, blockingFrames) {
			c.blocking = true
			c.calls = n
		}
		if hasPrefix(n, syncOverAsyncFrames) {
			c.syncOverAsync = true
		}
	}
	// No application frame: the pool's idle wait, or framework code
	// blocking on its own.
	if !c.blocking || onPoolIdle(fs) {
		c.idle = true
	}
	first := "[no stack]"
	for _, f := range fs {
		if f.Kind == stacks.KindManaged && !hasPrefix(bare(f.Name), blockingFrames) {
			first = bare(f.Name)
			break
		}
	}
	c.site = "[framework] " + first
	return c
}

// onPoolIdle: the worker's wait for work (PortableThreadPool's semaphore).
func onPoolIdle(fs []stacks.Frame) bool {
	for _, f := range fs {
		if strings.Contains(f.Name, "LowLevelLifoSemaphore") || strings.Contains(f.Name, "WorkerThread.WorkerDoWork") && !strings.Contains(f.Name, "Dispatch") {
			return true
		}
		if strings.Contains(f.Name, "ThreadPoolWorkQueue.Dispatch") {
			return false
		}
	}
	return false
}

// ReasonNames lists the adjustment reasons in the manifest's order.
func ReasonNames() []string {
	rs := clrevents.AdjustmentReasons()
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.String()
	}
	return out
}
