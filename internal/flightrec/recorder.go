package flightrec

import (
	"io"
	"time"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/nettrace"
)

// Options bounds a Recorder.
type Options struct {
	// MinAge is how much of the stream's past to keep (by event time).
	MinAge time.Duration
	// MaxBytes bounds the memory the ring holds; the oldest events go
	// first when it is reached, whatever their age.
	MaxBytes int
}

// ringEvent is a deep copy of one event.
type ringEvent struct {
	ev   nettrace.Event
	size int
}

// Recorder is the ring. It implements analysis.Analyzer.
type Recorder struct {
	hdr *nettrace.Header
	cfg Options

	ring  []ringEvent // oldest first; ring[head:] is live
	head  int
	bytes int
	// sticky holds evicted events that keep any window readable and
	// symbolizable: method and module loads (names for stack addresses).
	sticky []ringEvent
	// keepFrom, when non-zero, holds events from this timestamp on
	// whatever MinAge says (a pending window).
	keepFrom int64
	lastTS   int64
	stats    analysis.Stats
}

// New returns an empty Recorder for a stream with header hdr.
func New(hdr *nettrace.Header, cfg Options) *Recorder {
	return &Recorder{hdr: hdr, cfg: cfg}
}

// eventOverhead approximates an event's memory besides payload and stack.
const eventOverhead = 160

// Event copies ev into the ring and evicts what is too old or too much.
func (r *Recorder) Event(ev *nettrace.Event) {
	r.stats.Used()
	if ev.Timestamp > r.lastTS {
		r.lastTS = ev.Timestamp
	}
	c := *ev
	c.Payload = append([]byte(nil), ev.Payload...)
	if len(ev.Stack) > 0 {
		c.Stack = append([]uint64(nil), ev.Stack...)
	}
	// Losses belong to the live stream, not to a window written later.
	c.LostBefore = 0
	sz := len(c.Payload) + 8*len(c.Stack) + eventOverhead
	r.ring = append(r.ring, ringEvent{c, sz})
	r.bytes += sz
	r.evict()
}

// Stats implements analysis.Analyzer.
func (r *Recorder) Stats() analysis.Stats { return r.stats }

// Bytes is the memory the ring holds now (approximately).
func (r *Recorder) Bytes() int { return r.bytes }

// Hold keeps every event from timestamp ts on until Release, whatever its
// age (a window that is still being completed); the byte bound still holds.
func (r *Recorder) Hold(ts int64) { r.keepFrom = ts }

// Release ends a Hold.
func (r *Recorder) Release() { r.keepFrom = 0 }

func (r *Recorder) evict() {
	keepFrom := r.lastTS - r.Ticks(r.cfg.MinAge)
	if r.keepFrom != 0 {
		keepFrom = min(keepFrom, r.keepFrom)
	}
	for r.head < len(r.ring) {
		e := &r.ring[r.head]
		if e.ev.Timestamp >= keepFrom && (r.cfg.MaxBytes <= 0 || r.bytes <= r.cfg.MaxBytes) {
			break
		}
		if sticky(e.ev.Meta) {
			r.sticky = append(r.sticky, *e)
		} else {
			r.bytes -= e.size
		}
		*e = ringEvent{}
		r.head++
	}
	// Compact once the dead prefix is large, so memory stays flat.
	if r.head > 4096 && r.head*2 > len(r.ring) {
		n := copy(r.ring, r.ring[r.head:])
		clear(r.ring[n:])
		r.ring = r.ring[:n]
		r.head = 0
	}
}

// Ticks converts a duration to event-clock ticks.
func (r *Recorder) Ticks(d time.Duration) int64 {
	f := r.hdr.QPCFrequency
	if f <= 0 {
		f = 1_000_000_000
	}
	return int64(d.Seconds() * float64(f))
}

// sticky reports whether an evicted event must stay: bookkeeping a reader
// needs to name code in any window.
func sticky(m *nettrace.Metadata) bool {
	switch m.Runtime {
	case nettrace.Runtime:
		switch m.EventID {
		case clrevents.IDMethodLoad, clrevents.IDMethodLoadVerbose, clrevents.IDModuleLoad, clrevents.IDAssemblyLoad:
			return true
		}
	case nettrace.Rundown, nettrace.EventPipe:
		return true
	}
	return false
}

// WriteTo writes the events from timestamp from on (and every sticky
// event) to w as a .nettrace stream and returns how many it wrote.
func (r *Recorder) WriteTo(w io.Writer, from int64) (int, error) {
	nw, err := nettrace.NewWriter(w, *r.hdr, nettrace.WriterOptions{})
	if err != nil {
		return 0, err
	}
	n := 0
	for i := range r.sticky {
		if err := nw.WriteEvent(&r.sticky[i].ev); err != nil {
			return n, err
		}
		n++
	}
	for i := r.head; i < len(r.ring); i++ {
		e := &r.ring[i].ev
		if e.Timestamp < from && !sticky(e.Meta) {
			continue
		}
		if err := nw.WriteEvent(e); err != nil {
			return n, err
		}
		n++
	}
	return n, nw.Close()
}

// Reset drops everything held.
func (r *Recorder) Reset() {
	r.ring, r.sticky, r.head, r.bytes, r.keepFrom = nil, nil, 0, 0, 0
}
