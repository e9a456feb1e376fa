package fleet

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/nettrace"
)

// tap rides along on a target's session (monitor.Run's also) and hands
// its events to the analyses attached for a while: /triage attaches
// triage's own analyses for its window, so the live window is judged by
// the code `clrspy triage --pid` runs. With nothing attached an event
// costs one atomic load.
type tap struct {
	n  atomic.Int32
	mu sync.Mutex
	as []analysis.Analyzer
}

// Event implements analysis.Analyzer (the session's reader goroutine).
func (p *tap) Event(ev *nettrace.Event) {
	if p.n.Load() == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, a := range p.as {
		a.Event(ev)
	}
}

// Stats implements analysis.Analyzer: the attached analyses count their own.
func (p *tap) Stats() analysis.Stats { return analysis.Stats{} }

// attach starts handing events to a (from any goroutine).
func (p *tap) attach(a analysis.Analyzer) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.as = append(p.as, a)
	p.n.Add(1)
}

// detach stops handing events to a; once it returns, a sees no more
// events and may be read.
func (p *tap) detach(a analysis.Analyzer) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if i := slices.Index(p.as, a); i >= 0 {
		p.as = slices.Delete(p.as, i, i+1)
		p.n.Add(-1)
	}
}
