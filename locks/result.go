package locks

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/stacks"
)

// Result is the analysis of a whole stream. Times are nanoseconds; JSON
// writers convert them.
type Result struct {
	Summary Summary
	Locks   []Lock   // by total wait, longest first
	Threads []Thread // by total wait, longest first
	// StillWaiting lists the waits that had started but not ended when the
	// stream ended, by thread id.
	StillWaiting []Wait
	// Stacks holds every waiting stack by index (Lock.Stacks, Sample.Stack);
	// index 0 is the empty stack.
	Stacks []Stack
	// Samples aggregate waits by (stack, lock, thread) for a pprof profile,
	// ordered by delay, longest first.
	Samples []Sample
	// OwnerKind says how the runtime's owner values were read: "os-tid",
	// "thread-object", "managed-id", "mixed", "" when none were reported.
	OwnerKind string
	// Notes are one-line caveats about the data (missing events, unmapped
	// owners, ...), in a stable order.
	Notes []string
}

// Summary totals the stream.
type Summary struct {
	Contentions int64 // completed waits (paired start and stop)
	TotalNs     int64
	MaxNs       int64
	// Unpaired counts waits still open at the end of the stream.
	Unpaired int
	// StopsWithoutStart counts stops whose start preceded the session.
	StopsWithoutStart int
	// LostStarts counts starts followed by another start on the same
	// thread (the stop was lost).
	LostStarts   int
	LockCreated  int
	DecodeErrors int
	FirstError   string
	// LockIDs is true when the runtime named locks (ContentionStart v2).
	LockIDs bool
	// FoldedWaits counts waits of threads past Options.MaxThreads, kept
	// under one "[other threads]" thread.
	FoldedWaits int64
	// FoldedLockWaits counts waits on locks past Options.MaxLocks, kept
	// under one lock with FoldedLockID.
	FoldedLockWaits int64
	// WaitHistogram holds every completed wait in WaitBounds (a wait equal
	// to a bound in the bucket it closes, as Prometheus counts).
	WaitHistogram analysis.Histogram
}

// MeanNs is the mean completed wait.
func (s *Summary) MeanNs() int64 {
	if s.Contentions == 0 {
		return 0
	}
	return s.TotalNs / s.Contentions
}

// Lock is one contended lock.
type Lock struct {
	ID         uint64 // 0: the runtime did not name the lock (before .NET 8)
	Object     uint64 // address of the locked object when known
	ObjectType string // "" when the stream does not name it
	// TypeUnknownReason says why ObjectType is "" when a live target's
	// memory was asked (Options.ObjectTypes) and could not name it.
	TypeUnknownReason string
	Contentions       int64
	TotalNs           int64
	MaxNs             int64
	Histogram         analysis.Histogram // HistogramBounds: counts per HistogramLabels bucket
	Stacks            []StackWait
	Owners            []Owner
	Waiting           int // waits on this lock still open at the end
}

// MeanNs is the mean wait on the lock.
func (l *Lock) MeanNs() int64 {
	if l.Contentions == 0 {
		return 0
	}
	return l.TotalNs / l.Contentions
}

// StackWait is the waiting done from one stack.
type StackWait struct {
	Stack       int
	Contentions int64
	TotalNs     int64
}

// Owner is a thread that held the lock while others waited.
type Owner struct {
	// Raw is the value the runtime reported.
	Raw uint64
	// OSThreadID is the owner's OS thread id; 0 when Raw could not be mapped
	// (Mapped false) or the runtime reported no owner (Raw 0).
	OSThreadID  uint64
	Name        string // the OS thread's name when known (live sessions)
	ManagedID   uint32 // managed thread id when the thread events gave it
	Mapped      bool
	Via         string // how Raw was mapped: "os-tid", "thread-object", "managed-id", ""
	Contentions int64
	TotalNs     int64
}

// Thread is the waiting one OS thread did.
type Thread struct {
	OSThreadID  uint64
	Name        string // the OS thread's name when known (live sessions)
	ManagedID   uint32
	Contentions int64
	TotalNs     int64
	MaxNs       int64
}

// Wait is an open wait at the end of the stream.
type Wait struct {
	Thread  uint64
	LockID  uint64
	Owner   Owner
	SoFarNs int64 // from its start to the last event of the stream
	Stack   int
}

// Stack is one waiting stack: instruction pointers leaf first and their
// names. Without a symbolizer (or where it named nothing) Frames are the
// addresses in hexadecimal, one per IP; with one, Frames may be shorter
// than IPs (native runs fold into one frame).
type Stack struct {
	IPs     []uint64
	Frames  []string
	Modules []string // per frame; nil or "" when unknown
}

// Result resolves owners, object types and stacks and returns the analysis
// so far. It does not change the analyzer, so it may be called again (a
// live view). Without Options.Symbols frames are hexadecimal addresses.
func (a *Analyzer) Result() *Result {
	r := &Result{}
	s := &r.Summary
	s.Unpaired = len(a.open)
	s.StopsWithoutStart = a.stopsNoStart
	s.LostStarts = a.lostStarts
	s.LockCreated = a.lockCreated
	s.DecodeErrors = a.decodeErrors
	if a.firstErr != nil {
		s.FirstError = a.firstErr.Error()
	}
	s.LockIDs = a.hasV2
	s.FoldedWaits = a.foldedWaits
	s.FoldedLockWaits = a.foldedLockWaits
	s.WaitHistogram = a.waitHist.Clone()

	r.Stacks = make([]Stack, max(len(a.stk.Stacks), 1))
	var frameBuf []stacks.Frame // reused: only the names are kept
	for i, ips := range a.stk.Stacks {
		r.Stacks[i].IPs = ips
		if i != 0 && i == a.otherStack {
			r.Stacks[i].Frames = []string{FoldedStackFrame}
			continue
		}
		if len(ips) == 0 {
			continue
		}
		if a.sym != nil {
			// The profiler's rules: one symbol table, one naming.
			var ts int64
			if i < len(a.stk.TS) {
				ts = a.hdr.Nanos(a.stk.TS[i])
			}
			fs, _ := a.sym.AppendStack(frameBuf[:0], ips, ts)
			frameBuf = fs
			if len(fs) == 0 {
				continue
			}
			// One array for both, at its size: appending left them half
			// empty (7 MB of the result on a 1 GiB trace).
			names := make([]string, 2*len(fs))
			st := &r.Stacks[i]
			st.Frames, st.Modules = names[:len(fs):len(fs)], names[len(fs):]
			for j, f := range fs {
				st.Frames[j], st.Modules[j] = f.Name, f.Module
			}
			continue
		}
		r.Stacks[i].Frames = make([]string, len(ips))
		for j, ip := range ips {
			r.Stacks[i].Frames[j] = fmt.Sprintf("0x%x", ip)
		}
	}

	// Stacks that differ only in addresses within the same methods read
	// the same: merge them under the first.
	canon := make([]int, len(r.Stacks))
	byText := map[string]int{}
	for i := range r.Stacks {
		canon[i] = i
		if i == 0 {
			continue
		}
		k := strings.Join(r.Stacks[i].Frames, "\x00") + "\x01" + strings.Join(r.Stacks[i].Modules, "\x00")
		if j, ok := byText[k]; ok {
			canon[i] = j
		} else {
			byText[k] = i
		}
	}

	kinds := map[string]bool{}
	unmapped := 0
	owner := func(raw uint64) Owner {
		o := a.resolveOwner(raw)
		if raw != 0 {
			if o.Mapped {
				kinds[o.Via] = true
			} else {
				unmapped++
			}
		}
		return o
	}

	for _, l := range a.locks {
		lk := Lock{ID: l.id, Object: a.lockObject[l.id], Contentions: l.count, TotalNs: l.totalNs,
			MaxNs: l.maxNs, Histogram: l.hist.Clone()}
		lk.ObjectType = a.lockTypeName(l.id, lk.Object)
		merged := map[int]*agg{}
		for st, g := range l.stacks {
			m := merged[canon[st]]
			if m == nil {
				m = &agg{}
				merged[canon[st]] = m
			}
			m.count += g.count
			m.totalNs += g.totalNs
		}
		for i, st := range topAggs(merged, func(x, y int) bool { return x < y }) {
			if i == TopStacks {
				break
			}
			g := merged[st]
			lk.Stacks = append(lk.Stacks, StackWait{Stack: st, Contentions: g.count, TotalNs: g.totalNs})
		}
		for i, raw := range topAggs(l.owners, func(x, y uint64) bool { return x < y }) {
			if i == TopStacks {
				break
			}
			g := l.owners[raw]
			o := owner(raw)
			o.Contentions, o.TotalNs = g.count, g.totalNs
			lk.Owners = append(lk.Owners, o)
		}
		s.Contentions += l.count
		s.TotalNs += l.totalNs
		if l.maxNs > s.MaxNs {
			s.MaxNs = l.maxNs
		}
		r.Locks = append(r.Locks, lk)
	}
	for tid, p := range a.open {
		w := Wait{Thread: tid, LockID: p.lock, Stack: canon[p.stack], SoFarNs: a.hdr.DurationNanos(a.lastTS - p.ts)}
		if p.hasV2 {
			w.Owner = owner(p.owner)
		}
		r.StillWaiting = append(r.StillWaiting, w)
	}
	// Locks that only have open waits still belong in the list.
	waitingOn := map[uint64]int{}
	for _, w := range r.StillWaiting {
		waitingOn[w.LockID]++
	}
	for i := range r.Locks {
		r.Locks[i].Waiting = waitingOn[r.Locks[i].ID]
		delete(waitingOn, r.Locks[i].ID)
	}
	for id, n := range waitingOn {
		obj := a.lockObject[id]
		r.Locks = append(r.Locks, Lock{ID: id, Object: obj, ObjectType: a.lockTypeName(id, obj),
			Histogram: analysis.NewHistogram(HistogramBounds, true), Waiting: n})
	}
	a.nameFromMemory(r)
	sort.Slice(r.Locks, func(i, j int) bool {
		x, y := &r.Locks[i], &r.Locks[j]
		if x.TotalNs != y.TotalNs {
			return x.TotalNs > y.TotalNs
		}
		if x.Contentions != y.Contentions {
			return x.Contentions > y.Contentions
		}
		if x.Waiting != y.Waiting {
			return x.Waiting > y.Waiting
		}
		return x.ID < y.ID
	})
	sort.Slice(r.StillWaiting, func(i, j int) bool { return r.StillWaiting[i].Thread < r.StillWaiting[j].Thread })

	for tid, t := range a.threads {
		th := Thread{OSThreadID: tid, ManagedID: a.managedOf(tid), Contentions: t.count, TotalNs: t.totalNs, MaxNs: t.maxNs}
		if tid == FoldedThreadID {
			th.Name = FoldedThreadName
		}
		r.Threads = append(r.Threads, th)
	}
	sort.Slice(r.Threads, func(i, j int) bool {
		x, y := &r.Threads[i], &r.Threads[j]
		if x.TotalNs != y.TotalNs {
			return x.TotalNs > y.TotalNs
		}
		return x.OSThreadID < y.OSThreadID
	})

	// Samples whose stacks are the same once named merge: sorted by
	// (stack, lock, thread), equal neighbours add up (no second map).
	r.Samples = make([]Sample, 0, len(a.samples))
	for k, v := range a.samples {
		r.Samples = append(r.Samples, Sample{Stack: canon[k.stack], LockID: k.lock, Thread: k.thread,
			Contentions: v.contentions, DelayNs: v.delayNs})
	}
	byKey := func(x, y *Sample) int {
		if c := cmp.Compare(x.Stack, y.Stack); c != 0 {
			return c
		}
		if c := cmp.Compare(x.LockID, y.LockID); c != 0 {
			return c
		}
		return cmp.Compare(x.Thread, y.Thread)
	}
	slices.SortFunc(r.Samples, func(x, y Sample) int { return byKey(&x, &y) })
	out := r.Samples[:0]
	for i := range r.Samples {
		if n := len(out); n > 0 && byKey(&out[n-1], &r.Samples[i]) == 0 {
			out[n-1].Contentions += r.Samples[i].Contentions
			out[n-1].DelayNs += r.Samples[i].DelayNs
			continue
		}
		out = append(out, r.Samples[i])
	}
	r.Samples = out
	slices.SortFunc(r.Samples, func(x, y Sample) int {
		if x.DelayNs != y.DelayNs {
			return cmp.Compare(y.DelayNs, x.DelayNs)
		}
		return byKey(&x, &y)
	})

	switch len(kinds) {
	case 0:
	case 1:
		for k := range kinds {
			r.OwnerKind = k
		}
	default:
		r.OwnerKind = "mixed"
	}
	r.Notes = a.notes(r, unmapped)
	return r
}

func (a *Analyzer) notes(r *Result, unmapped int) []string {
	var n []string
	if !a.anyStart {
		n = append(n, "no ContentionStart events: no lock was contended, or the Contention keyword (0x4000) was off")
	}
	if a.anyStart && !a.hasV2 {
		n = append(n, "the runtime reported no lock ids or owners (ContentionStart before v2, .NET 7 or older): waits are grouped under one unknown lock")
	}
	if a.foldedTriples > 0 {
		n = append(n, fmt.Sprintf("%d waits past the first %d (stack, lock, thread) combinations are counted under %s", a.foldedTriples, maxSamples, FoldedThreadName))
	}
	if a.foldedWaits > 0 {
		n = append(n, fmt.Sprintf("%d waits of threads past the first %d are counted under %s", a.foldedWaits, a.maxThreads, FoldedThreadName))
	}
	if unmapped > 0 {
		n = append(n, fmt.Sprintf("%d owner value(s) could not be mapped to an OS thread: no ThreadCreated/ThreadDC event or waiting thread matched them", unmapped))
	}
	var noOwner int64
	for _, l := range a.locks {
		if g := l.owners[0]; g != nil {
			noOwner += g.count
		}
	}
	if noOwner > 0 {
		n = append(n, fmt.Sprintf("the runtime reported no owner (0) for %d wait(s)", noOwner))
	}
	if r.Summary.Unpaired > 0 {
		n = append(n, fmt.Sprintf("%d wait(s) still open when the stream ended", r.Summary.Unpaired))
	}
	if r.Summary.StopsWithoutStart > 0 {
		n = append(n, fmt.Sprintf("%d stop(s) without a start (waits begun before the session) are not counted", r.Summary.StopsWithoutStart))
	}
	if r.Summary.LostStarts > 0 {
		n = append(n, fmt.Sprintf("%d start(s) were followed by another start on the same thread (a stop was lost); the earlier ones are not counted", r.Summary.LostStarts))
	}
	if r.Summary.DecodeErrors > 0 {
		n = append(n, fmt.Sprintf("%d payload(s) did not decode and were skipped (first: %s)", r.Summary.DecodeErrors, r.Summary.FirstError))
	}
	return n
}

// resolveOwner maps the runtime's owner value to an OS thread. A Thread*
// address is checked first (it cannot be confused with a small id), then
// OS thread ids the stream showed, then managed thread ids.
func (a *Analyzer) resolveOwner(raw uint64) Owner {
	o := Owner{Raw: raw}
	if raw == 0 {
		return o
	}
	if raw == FoldedThreadID {
		o.Name = FoldedThreadName
		return o
	}
	if t, ok := a.threadObj.get(raw); ok && t.OSThreadID != 0 {
		o.OSThreadID, o.ManagedID, o.Mapped, o.Via = uint64(t.OSThreadID), t.ManagedID, true, "thread-object"
		return o
	}
	if _, ok := a.osThreads.get(raw); ok {
		o.OSThreadID, o.ManagedID, o.Mapped, o.Via = raw, a.managedOf(raw), true, "os-tid"
		return o
	}
	if raw <= math32 {
		if tid, ok := a.managed.get(uint32(raw)); ok {
			o.OSThreadID, o.ManagedID, o.Mapped, o.Via = uint64(tid), uint32(raw), true, "managed-id"
		}
	}
	return o
}

const math32 = 1<<32 - 1

func (a *Analyzer) managedOf(tid uint64) uint32 {
	m, _ := a.osManaged.get(tid)
	return m
}

// lockTypeName is the type found when the lock was first seen or, failing
// that, the type of its last known object address now.
func (a *Analyzer) lockTypeName(lock, obj uint64) string {
	if o, ok := a.lockType[lock]; ok {
		return a.typeName(o)
	}
	if obj == 0 {
		return ""
	}
	if t, ok := a.objects.get(obj); ok {
		return a.typeName(objectInfo{typeID: t, name: a.allocNames[t]})
	}
	return ""
}

// typeName names an allocation's type; a BulkType may have named the type
// id after the allocation event.
func (a *Analyzer) typeName(o objectInfo) string {
	if o.name != "" {
		return o.name
	}
	return a.typeNames[o.typeID]
}

// NameThreads names the waiting threads and the owners with name (the OS
// thread names a live session read from /proc; events carry none).
func (r *Result) NameThreads(name func(tid uint64) string) {
	for i := range r.Threads {
		r.Threads[i].Name = name(r.Threads[i].OSThreadID)
	}
	for i := range r.Locks {
		for j := range r.Locks[i].Owners {
			if o := &r.Locks[i].Owners[j]; o.OSThreadID != 0 {
				o.Name = name(o.OSThreadID)
			}
		}
	}
	for i := range r.StillWaiting {
		if o := &r.StillWaiting[i].Owner; o.OSThreadID != 0 {
			o.Name = name(o.OSThreadID)
		}
	}
}

// SetObjectTypes sets Options.ObjectTypes after New (a caller that knows
// the live target only once the session has run).
func (a *Analyzer) SetObjectTypes(fn func(objs []uint64) (map[uint64]string, string)) {
	a.objectTypes = fn
}

// nameFromMemory names the objects of the locks the stream left unnamed
// through Options.ObjectTypes (a live target's memory, read by the
// caller).
func (a *Analyzer) nameFromMemory(r *Result) {
	if a.objectTypes == nil {
		return
	}
	var objs []uint64
	for _, l := range r.Locks {
		if l.ObjectType == "" && l.Object != 0 {
			objs = append(objs, l.Object)
		}
	}
	if len(objs) == 0 {
		return
	}
	names, why := a.objectTypes(objs)
	for i := range r.Locks {
		l := &r.Locks[i]
		if l.ObjectType != "" || l.Object == 0 {
			continue
		}
		if n := names[l.Object]; n != "" {
			l.ObjectType = n
		} else if why != "" {
			l.TypeUnknownReason = why
		} else {
			l.TypeUnknownReason = "the target's memory does not name the object"
		}
	}
}
