package locks

import (
	"math"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/stacks"
)

// StackSymbolizer names waiting stacks exactly as the profiler names its
// samples: it keeps a stacks.Builder fed with the stream's method, module
// and rundown events and, at the end, hands it each waiting stack as one
// sample of its own pseudo-thread. One symbol table, one set of rules
// (return addresses, [native code] runs, unknown addresses) for both
// commands.
type StackSymbolizer struct {
	b *stacks.Builder
}

// NewStackSymbolizer returns a symbolizer for a stream with header hdr.
func NewStackSymbolizer(hdr *nettrace.Header) *StackSymbolizer {
	return &StackSymbolizer{b: stacks.NewBuilder(hdr, stacks.Options{})}
}

// Event feeds one event; the stream's own samples are kept out so that only
// waiting stacks end up in the builder's profile.
func (s *StackSymbolizer) Event(ev *nettrace.Event) {
	if ev.Meta.Runtime == nettrace.SampleProfiler {
		return
	}
	s.b.Event(ev)
}

// pseudoThread numbers the pseudo-threads above any real thread id.
const pseudoThread = math.MaxUint64 / 2

// Symbolize implements Symbolizer. It may be called once.
func (s *StackSymbolizer) Symbolize(st [][]uint64, ts []int64) []SymbolizedStack {
	meta := &nettrace.Metadata{Provider: nettrace.ProviderSampleProfiler, Runtime: nettrace.SampleProfiler,
		EventID: clrevents.IDThreadSample, Name: "Thread/Sample"}
	payload := []byte{byte(clrevents.SampleManaged), 0, 0, 0}
	for i, ips := range st {
		if len(ips) == 0 {
			continue
		}
		var t int64
		if i < len(ts) {
			t = ts[i]
		}
		s.b.Event(&nettrace.Event{Meta: meta, Timestamp: t, ThreadID: pseudoThread + uint64(i),
			CaptureThreadID: pseudoThread + uint64(i), Stack: ips, Payload: payload})
	}
	p := s.b.Profile()
	out := make([]SymbolizedStack, len(st))
	for _, smp := range p.Samples {
		if smp.Thread < 0 || smp.Thread >= len(p.Threads) {
			continue
		}
		id := p.Threads[smp.Thread].ID
		if id < pseudoThread || id-pseudoThread >= uint64(len(st)) {
			continue
		}
		var ss SymbolizedStack
		for _, f := range smp.Stack {
			fr := p.Frames[f]
			ss.Frames = append(ss.Frames, fr.Name)
			ss.Modules = append(ss.Modules, fr.Module)
		}
		out[id-pseudoThread] = ss
	}
	return out
}
