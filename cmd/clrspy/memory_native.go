package main

import (
	"context"
	"fmt"

	"github.com/clrspy/clrspy/memory"
	"github.com/clrspy/clrspy/perf"
	"github.com/clrspy/clrspy/report"
)

// nativeTop is how many stacks of each list --native reports.
const nativeTop = 50

// memoryNative runs memory --native's probes beside the sampling: perf's
// allocator probes feed memory's accounting.
type memoryNative struct {
	tr     *perf.AllocTracer
	acc    *memory.Native
	cancel context.CancelFunc
	done   chan error
}

func startMemoryNative(pid int, sampleBytes int64, seed uint64) (*memoryNative, error) {
	tr, err := perf.OpenAllocTracer(pid, perf.AllocOptions{})
	if err != nil {
		return nil, fmt.Errorf("--native: %w", err)
	}
	s := memory.NewByteSampler(sampleBytes, seed)
	m := &memoryNative{tr: tr, acc: memory.NewNative(s), done: make(chan error, 1)}
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

// finish stops the probes and names the stacks: the report's section
// (its top nativeTop stacks of each list), every stack (for the pprof and
// folded profiles: the top ones with the same values), its notes, and why
// the estimates are partial ("" when they are not).
func (m *memoryNative) finish() (doc, all *report.MemoryNativeJSON, notes []string, partial string) {
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
	top.Outstanding = top.Outstanding[:min(nativeTop, len(top.Outstanding))]
	top.Allocated = top.Allocated[:min(nativeTop, len(top.Allocated))]
	return &top, all, notes, partial
}
