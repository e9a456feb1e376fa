package flightrec

import (
	"fmt"
	"io"
	"time"

	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/nettrace"
)

// TriggerOptions configures a PauseTrigger.
type TriggerOptions struct {
	// Over is the pause length that triggers a save.
	Over time.Duration
	// Before and After bound the window: from Before the pause's start to
	// After its end.
	Before, After time.Duration
	// Rearm saves again at every later long pause; otherwise the trigger
	// is done after the first save.
	Rearm bool
	// MaxBytes bounds the ring's memory.
	MaxBytes int
	// Create opens the destination of the n-th save (1-based) of GC g and
	// returns it with a name for notices. Close commits it; a destination
	// with an Abort method is aborted instead when the write fails.
	Create func(n int, g *gcpause.GC) (w io.WriteCloser, name string, err error)
	// Notice receives one-line progress messages (may be nil).
	Notice func(string)
	// Done is called once the trigger will save nothing more (after the
	// first save without Rearm): `record` stops its session there.
	Done func()
}

// Window is what a pause trigger saves, as the commands' flags give it
// (--save-on-pause-over, --before, --after, --rearm, --ring-mb; `record`,
// `gc` and serve alike): the part of TriggerOptions they share.
type Window struct {
	Over, Before, After time.Duration
	Rearm               bool
	RingBytes           int
}

// Trigger is the pause trigger of w (TriggerOptions' Create, Notice and
// Done).
func (w Window) Trigger(hdr *nettrace.Header, create func(n int, g *gcpause.GC) (io.WriteCloser, string, error), notice func(string), done func()) *PauseTrigger {
	return NewPauseTrigger(hdr, TriggerOptions{Over: w.Over, Before: w.Before, After: w.After, Rearm: w.Rearm, MaxBytes: w.RingBytes,
		Create: create, Notice: notice, Done: done})
}

// PauseTrigger saves the window around long GC pauses. Feed it every event
// (Event), every GC as it begins (GCStart, from gcpause.Options.OnGCStart)
// and when it finished (GC, from gcpause.Options.OnGC), then Finish at the
// end of the stream. It decodes no event: the pause analysis did.
type PauseTrigger struct {
	*Recorder
	cfg TriggerOptions

	// open holds, per GC still running, where its window would start: a
	// GC is known to be long only once it ended, so what precedes it must
	// be kept while it runs (a pause can be longer than Before).
	open map[uint32]int64

	pending  *gcpause.GC // a pause over the threshold, waiting for After
	deadline int64       // event clock: save once an event is past it
	// queued are later long pauses that ended while one was pending
	// (with Rearm): each gets its own window, in order.
	queued []*gcpause.GC
	saved  int
	done   bool
	errs   []error
}

// NewPauseTrigger returns an armed trigger for a stream with header hdr.
func NewPauseTrigger(hdr *nettrace.Header, cfg TriggerOptions) *PauseTrigger {
	return &PauseTrigger{Recorder: New(hdr, Options{MinAge: cfg.Before, MaxBytes: cfg.MaxBytes}), cfg: cfg, open: make(map[uint32]int64)}
}

func (p *PauseTrigger) notice(format string, args ...any) {
	if p.cfg.Notice != nil {
		p.cfg.Notice(fmt.Sprintf(format, args...))
	}
}

// Event records ev, and saves a pending window once the stream is past its
// end.
func (p *PauseTrigger) Event(ev *nettrace.Event) {
	if p.done {
		return
	}
	for p.pending != nil && ev.Timestamp > p.deadline {
		p.save()
		if p.done {
			return
		}
	}
	p.Recorder.Event(ev)
}

// GCStart is told of every GC as it begins (gcpause.Options.OnGCStart,
// before the trigger sees the GCStart event): its window may start Before
// its pause's start, so the ring holds from there while it runs.
func (p *PauseTrigger) GCStart(g *gcpause.GC) {
	if p.done {
		return
	}
	if len(p.open) >= maxOpen {
		clear(p.open) // GCs whose end was lost: never hold forever
	}
	p.open[g.Number] = p.pauseStart(g)
	p.hold()
}

// maxOpen bounds the GCs held open (a background GC and a few foreground
// ones run at once; more means their ends were lost).
const maxOpen = 64

// hold keeps what the pending save and every running GC's window need.
func (p *PauseTrigger) hold() {
	from := int64(0)
	if p.pending != nil {
		from = p.pauseStart(p.pending)
	}
	for _, ts := range p.open {
		if from == 0 || ts < from {
			from = ts
		}
	}
	if from == 0 {
		p.Release()
		return
	}
	p.Hold(from - p.Ticks(p.cfg.Before))
}

func (p *PauseTrigger) pauseStart(g *gcpause.GC) int64 {
	return p.hdr.SyncTimeQPC + p.Ticks(time.Duration(g.PauseStartNanos))
}

// GC is told of every finished GC; a complete one paused longer than Over
// arms the save.
func (p *PauseTrigger) GC(g *gcpause.GC) {
	if p.done {
		return
	}
	delete(p.open, g.Number)
	if !g.Complete || g.PauseNanos <= int64(p.cfg.Over) {
		p.hold()
		return
	}
	if p.pending != nil {
		if p.cfg.Rearm {
			p.queued = append(p.queued, g)
		}
		return
	}
	p.arm(g)
}

// arm makes g the pending save.
func (p *PauseTrigger) arm(g *gcpause.GC) {
	p.pending = g
	end := p.hdr.SyncTimeQPC + p.Ticks(time.Duration(g.PauseEndNanos))
	p.deadline = end + p.Ticks(p.cfg.After)
	// Never drop what the pending window needs.
	p.hold()
	p.notice("GC %d paused %.1f ms (over %v): saving the trace %v after it", g.Number, float64(g.PauseNanos)/1e6, p.cfg.Over, p.cfg.After)
}

// Finish saves the pending windows at the end of the stream.
func (p *PauseTrigger) Finish() {
	for p.pending != nil && !p.done {
		p.save()
	}
}

// Saved is the number of windows written.
func (p *PauseTrigger) Saved() int { return p.saved }

// Errors are the saves that failed.
func (p *PauseTrigger) Errors() []error { return p.errs }

func (p *PauseTrigger) save() {
	g := p.pending
	p.pending = nil
	p.hold()
	n, name, err := p.write(g)
	if err != nil {
		p.errs = append(p.errs, err)
		if name != "" {
			p.notice("saving %s: %v", name, err)
		} else {
			p.notice("saving the trace of GC %d: %v", g.Number, err)
		}
	} else {
		p.saved++
		p.notice("saved %d events around GC %d to %s", n, g.Number, name)
	}
	if !p.cfg.Rearm {
		p.done = true
		p.Reset()
		if p.cfg.Done != nil {
			p.cfg.Done()
		}
		return
	}
	if len(p.queued) > 0 {
		next := p.queued[0]
		p.queued = p.queued[1:]
		p.arm(next)
	}
}

func (p *PauseTrigger) write(g *gcpause.GC) (int, string, error) {
	w, name, err := p.cfg.Create(p.saved+1, g)
	if err != nil {
		return 0, name, err
	}
	n, err := p.WriteTo(w, p.pauseStart(g)-p.Ticks(p.cfg.Before))
	if err != nil {
		// A destination that can drop a half-written file does so.
		if a, ok := w.(interface{ Abort() error }); ok {
			a.Abort()
			return n, name, err
		}
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	return n, name, err
}
