package capture

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/counters"
	"github.com/clrspy/clrspy/internal/memread"
	"github.com/clrspy/clrspy/internal/procfs"
	"github.com/clrspy/clrspy/memory"
	"github.com/clrspy/clrspy/perf"
	"github.com/clrspy/clrspy/report"
	"github.com/clrspy/clrspy/source"
)

// MemoryRuntimeSpec is the EventPipe session `memory` keeps open beside
// its sampling of a .NET process: heap addresses (to find the GC's
// reservation by them) and the runtime's GC counters.
func MemoryRuntimeSpec(pid int) source.Spec {
	ps := clrevents.ProvidersFor(memory.RuntimeWants)
	ps = append(ps, counters.Providers(&counters.Options{Interval: time.Second})...)
	return source.Spec{Pid: pid, Providers: ps, BufferMB: 1, Threads: 1}
}

// MemoryRuntime reads a MemoryRuntimeSpec session in the background:
// what the runtime says of its heap while /proc is sampled.
type MemoryRuntime struct {
	st   *source.Stream
	rt   *memory.Runtime
	cn   *counters.Analyzer
	done chan struct{}
}

// StartMemoryRuntime runs st (opened from MemoryRuntimeSpec) until Finish.
func StartMemoryRuntime(st *source.Stream) *MemoryRuntime {
	m := &MemoryRuntime{st: st, rt: memory.NewRuntime(st.Header()), cn: counters.New(st.Header(), counters.Options{}), done: make(chan struct{})}
	go func() {
		defer close(m.done)
		st.Run(m.rt, m.cn)
	}()
	return m
}

// Hints are the heap addresses seen so far (nil on a nil MemoryRuntime).
func (m *MemoryRuntime) Hints() []uint64 {
	if m == nil {
		return nil
	}
	return m.rt.Addresses()
}

// Finish stops the session and says what the runtime reported.
func (m *MemoryRuntime) Finish() *report.MemoryRuntimeJSON {
	m.st.Stop()
	select {
	case <-m.done:
	case <-time.After(5 * time.Second):
		m.st.Session().Close()
		<-m.done
	}
	m.st.Close()
	out := &report.MemoryRuntimeJSON{HeapAddresses: len(m.rt.Addresses())}
	for _, c := range m.cn.Result().Metrics {
		v := c.Value
		if c.Unit != "By" {
			v *= 1e6 // the EventCounters' MB
		}
		switch c.RuntimeName {
		case "gc-heap-size":
			out.GCHeapSizeBytes = &v
		case "gc-committed":
			out.GCCommittedBytes = &v
		}
	}
	if h, n := m.rt.HeapStats(); h != nil {
		out.GCs = n
		out.Generations = &report.MemoryGenerationsJSON{Gen0: h.GenerationSize[0], Gen1: h.GenerationSize[1], Gen2: h.GenerationSize[2],
			LOH: h.GenerationSize[3], POH: h.GenerationSize[4]}
	}
	return out
}

// NativeTop is how many stacks of each list `memory --native` reports.
const NativeTop = 50

// NativeAllocs is `memory --native`'s job: perf's allocator probes feed
// memory's accounting while the split is sampled.
type NativeAllocs struct {
	tr     *perf.AllocTracer
	acc    *memory.Native
	cancel context.CancelFunc
	done   chan error
}

// StartNativeAllocs puts the probes on pid's allocator, sampling once
// every sampleBytes bytes on average.
func StartNativeAllocs(pid int, sampleBytes int64, seed uint64) (*NativeAllocs, error) {
	tr, err := perf.OpenAllocTracer(pid, perf.AllocOptions{})
	if err != nil {
		return nil, fmt.Errorf("--native: %w", err)
	}
	s := memory.NewByteSampler(sampleBytes, seed)
	m := &NativeAllocs{tr: tr, acc: memory.NewNative(s), done: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	m.cancel = cancel
	go func() {
		m.done <- tr.Run(ctx, s.Take, func(ev *perf.AllocEvent) {
			switch ev.Kind {
			case perf.AllocMalloc:
				m.acc.Enter(ev.Tid, memory.CallMalloc, ev.Size, 0, ev.Sampled, ev.Stack, ev.Time)
			case perf.AllocCalloc:
				m.acc.Enter(ev.Tid, memory.CallCalloc, ev.Size, 0, ev.Sampled, ev.Stack, ev.Time)
			case perf.AllocRealloc:
				m.acc.Enter(ev.Tid, memory.CallRealloc, ev.Size, ev.Addr, ev.Sampled, ev.Stack, ev.Time)
			case perf.AllocFree:
				m.acc.Free(ev.Addr)
			case perf.AllocReturn:
				m.acc.Return(ev.Tid, ev.Addr)
			}
		})
	}()
	return m, nil
}

// Finish stops the probes and names the stacks: the report's section
// (its top NativeTop stacks of each list), every stack (for the pprof and
// folded profiles: the top ones with the same values), its notes, and why
// the estimates are partial ("" when they are not).
func (m *NativeAllocs) Finish() (doc, all *report.MemoryNativeJSON, notes []string, partial string) {
	m.cancel()
	err := <-m.done
	m.tr.StopProbes()
	ids := m.acc.Stacks()
	frames := m.tr.Frames(ids)
	names := make(map[int32][]string, len(ids))
	for i, id := range ids {
		l := []string{}
		for _, f := range frames[i] {
			l = append(l, f.Name)
		}
		names[id] = l
	}
	r := m.acc.Result(func(id int32) []string { return names[id] }, 0)
	notes = m.tr.Notes()
	if err != nil {
		notes = append(notes, fmt.Sprintf("native allocation probes stopped: %v", err))
	}
	st := m.tr.Stats()
	notes = append(notes, fmt.Sprintf("native: %d allocator calls, %d frees on %d threads of %s, %d sampled (one per %d bytes on average)",
		r.Stats.Calls, r.Stats.Frees, st.Threads, m.tr.Libc(), r.Stats.Sampled, r.SampleBytes))
	if r.Stats.Unpaired > 0 {
		notes = append(notes, fmt.Sprintf("native: %d calls without their return or returns without their call (lost records, or threads followed mid-call)", r.Stats.Unpaired))
	}
	if st.Lost > 0 {
		partial = fmt.Sprintf("native: %d allocator records lost (clrspy fell behind the target's calls): the estimates miss those calls", st.Lost)
	}
	m.tr.Close()
	all = report.NewMemoryNative(&r)
	top := *all
	top.Outstanding = top.Outstanding[:min(NativeTop, len(top.Outstanding))]
	top.Allocated = top.Allocated[:min(NativeTop, len(top.Allocated))]
	return &top, all, notes, partial
}

// SampleMemory reads pid's memory split now and, for duration, every
// interval, until the process exits (exited closes, or its smaps goes)
// or SIGINT/SIGTERM; heap gives the heap addresses known so far
// (MemoryRuntime.Hints). notice hears why a timeline ended early.
func SampleMemory(pid int, duration, interval time.Duration, exited <-chan struct{}, heap func() []uint64, notice func(string)) ([]memory.Sample, error) {
	start := time.Now()
	take := func() (memory.Sample, error) {
		es, err := procfs.Smaps(pid)
		if err != nil {
			if os.IsNotExist(err) || errors.Is(err, syscall.ESRCH) {
				return memory.Sample{}, errGone
			}
			if os.IsPermission(err) {
				return memory.Sample{}, fmt.Errorf("pid %d: cannot read its /proc/%d/smaps (run as its user or root)", pid, pid)
			}
			return memory.Sample{}, fmt.Errorf("pid %d: %w", pid, err)
		}
		if len(es) == 0 {
			return memory.Sample{}, errGone // a zombie (or a kernel thread) has no mappings
		}
		s := memory.Sample{AtNs: int64(time.Since(start)), Split: memory.Classify(es, memory.Hints{HeapAddresses: heap(), StackPointers: memread.StackPointers(pid)})}
		if cg, err := procfs.ReadCgroupMemory(pid); err == nil {
			s.CgroupUsage = cg.Usage
		}
		return s, nil
	}
	first, err := take()
	if err == errGone {
		return nil, fmt.Errorf("pid %d: no mappings to read (a kernel thread, or it has exited)", pid)
	}
	if err != nil {
		return nil, err
	}
	ss := []memory.Sample{first}
	if duration == 0 {
		return ss, nil
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	end := time.After(duration)
	for {
		select {
		case <-tick.C:
			s, err := take()
			if err == errGone {
				// A launched program's exit is seen here first at times:
				// let its status arrive before the report.
				select {
				case <-exited:
				case <-time.After(2 * time.Second):
				}
				notice(fmt.Sprintf("pid %d exited: the timeline ends with it", pid))
				return ss, nil
			}
			if err != nil {
				notice(fmt.Sprintf("pid %d: sampling stopped: %v", pid, err))
				return ss, nil
			}
			ss = append(ss, s)
		case <-end:
			return ss, nil
		case <-sigs:
			return ss, nil
		case <-exited:
			notice(fmt.Sprintf("pid %d exited: the timeline ends with it", pid))
			return ss, nil
		}
	}
}

// errGone: the process's smaps is gone (it exited).
var errGone = errors.New("no such process")

// MemoryOptions are one `memory` run's.
type MemoryOptions struct {
	// Duration and Interval: the split is sampled every Interval for
	// Duration (0: once).
	Duration, Interval time.Duration
	// Runtime opens a MemoryRuntimeSpec session through Open beside the
	// sampling (one that fails leaves the layout alone to find the GC's
	// reservation by).
	Runtime bool
	Open    func(source.Spec) (*source.Stream, error)
	// Native puts the allocator probes on (StartNativeAllocs), sampling
	// every SampleBytes on average, from Seed (0: the clock).
	Native      bool
	SampleBytes int64
	Seed        uint64
	// Exited closes when the process exits (nil: never told).
	Exited <-chan struct{}
	Notice func(string)
}

// MemoryResult is one `memory` run's report, and every stack of the
// native allocations (nil without Native) for the profiles.
type MemoryResult struct {
	Doc       *report.MemoryDocument
	NativeAll *report.MemoryNativeJSON
	SpanNs    int64 // first sample to last
	// Samples are the split's readings from Started, Cgroup the
	// cgroup's figures at the end (nil outside a memory cgroup).
	Samples []memory.Sample
	Cgroup  *procfs.CgroupMemory
	Started time.Time
}

// RunMemory is the `memory` job on pid: the runtime's session and the
// native probes (as asked) beside the sampling of its split, then the
// document.
func RunMemory(pid int, o MemoryOptions) (*MemoryResult, error) {
	var rt *MemoryRuntime
	if o.Runtime {
		if st, err := o.Open(MemoryRuntimeSpec(pid)); err != nil {
			o.Notice(fmt.Sprintf("no runtime session (%v): the GC's reservation is found from the layout alone", err))
		} else if rt = StartMemoryRuntime(st); o.Duration == 0 {
			// One sample: give the counters their first publication.
			select {
			case <-time.After(1500 * time.Millisecond):
			case <-o.Exited:
			}
		}
	}
	var native *NativeAllocs
	if o.Native {
		seed := o.Seed
		if seed == 0 {
			seed = uint64(time.Now().UnixNano())
		}
		var err error
		if native, err = StartNativeAllocs(pid, o.SampleBytes, seed); err != nil {
			if rt != nil {
				rt.Finish()
			}
			return nil, err
		}
	}
	started := time.Now()
	ss, err := SampleMemory(pid, o.Duration, o.Interval, o.Exited, rt.Hints, o.Notice)
	r := &MemoryResult{Started: started}
	var nativeDoc *report.MemoryNativeJSON
	var nativePartial string
	if native != nil {
		var notes []string
		nativeDoc, r.NativeAll, notes, nativePartial = native.Finish()
		for _, n := range notes {
			o.Notice(n)
		}
	}
	var rtDoc *report.MemoryRuntimeJSON
	if rt != nil {
		rtDoc = rt.Finish()
	}
	if err != nil {
		return nil, err
	}
	cg, cgErr := procfs.ReadCgroupMemory(pid)
	if cgErr != nil {
		cg = nil
	}
	in := report.Input{Source: fmt.Sprintf("pid %d", pid), Live: true, Complete: true}
	if nativePartial != "" {
		in.Complete, in.Partial = false, []string{nativePartial}
	}
	r.Doc = report.NewMemoryDocument(in, pid, source.ProcName(pid), ss, cg)
	r.Doc.Runtime, r.Doc.Native = rtDoc, nativeDoc
	r.SpanNs = ss[len(ss)-1].AtNs - ss[0].AtNs
	r.Samples, r.Cgroup = ss, cg
	return r, nil
}
