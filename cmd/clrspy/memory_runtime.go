package main

import (
	"time"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/counters"
	"github.com/clrspy/clrspy/memory"
	"github.com/clrspy/clrspy/report"
	"github.com/clrspy/clrspy/source"
)

// memoryRuntime is the EventPipe session clrspy memory keeps open beside
// its sampling of a .NET process: heap addresses (to find the GC's
// reservation by them) and what the runtime says of its heap.
type memoryRuntime struct {
	st   *source.Stream
	rt   *memory.Runtime
	cn   *counters.Analyzer
	done chan struct{}
}

func startMemoryRuntime(pid int) (*memoryRuntime, error) {
	ps := clrevents.ProvidersFor(memory.RuntimeWants)
	ps = append(ps, counters.Providers(&counters.Options{Interval: time.Second})...)
	st, err := source.Open(source.Spec{Pid: pid, Providers: ps, BufferMB: 1, Threads: 1})
	if err != nil {
		return nil, err
	}
	m := &memoryRuntime{st: st, rt: memory.NewRuntime(st.Header()), cn: counters.New(st.Header(), counters.Options{}), done: make(chan struct{})}
	go func() {
		defer close(m.done)
		st.Run(m.rt, m.cn)
	}()
	return m, nil
}

// hints are the heap addresses seen so far.
func (m *memoryRuntime) hints() []uint64 {
	if m == nil {
		return nil
	}
	return m.rt.Addresses()
}

// finish stops the session and says what the runtime reported.
func (m *memoryRuntime) finish() *report.MemoryRuntimeJSON {
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
