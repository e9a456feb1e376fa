package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/internal/outfile"
	"github.com/clrspy/clrspy/nettrace"
)

// The "stop the trace after a long GC" trigger (dotnet/diagnostics#464):
// keep a bounded ring of the live stream in memory and, when a GC pause
// longer than a threshold ends, write a readable .nettrace covering the
// window before and after it.
//
// clrspy record --stop-on-pause-over D writes only that window to -o and
// then stops the session (or re-arms); clrspy gc --save-on-pause-over D
// does the same beside its live monitor, which keeps running.

// addRecordTriggerFlags registers record's trigger flags; the window file
// is record's -o.
func addRecordTriggerFlags(c *cobra.Command) *triggerOptions {
	o := &triggerOptions{}
	f := c.Flags()
	f.DurationVar(&o.over, "stop-on-pause-over", 0, "keep only a ring of the stream in memory; when a GC pause longer than this ends, write the window around it to -o and stop (see --rearm)")
	f.DurationVar(&o.before, "before", 30*time.Second, "with --stop-on-pause-over: how much of the stream before the pause to keep")
	f.DurationVar(&o.after, "after", 5*time.Second, "with --stop-on-pause-over: how much of the stream after the pause to add")
	f.BoolVar(&o.rearm, "rearm", false, "with --stop-on-pause-over: keep going and save every later long pause too (FILE-2, FILE-3, ...)")
	f.IntVar(&o.maxMB, "ring-mb", 512, "with --stop-on-pause-over: memory bound of the ring, in MB")
	return o
}

func init() {
	gcFlagHooks = append(gcFlagHooks, func(c *cobra.Command, o *gcOptions) {
		f := c.Flags()
		f.DurationVar(&o.trigger.over, "save-on-pause-over", 0, "when a GC pause longer than this ends, save the stream around it to --trace-out (live sessions)")
		f.StringVar(&o.trigger.out, "trace-out", "", "file the triggered trace is written to (with --rearm: FILE, FILE-2, ...)")
		f.DurationVar(&o.trigger.before, "before", 30*time.Second, "with --save-on-pause-over: how much of the stream before the pause to keep")
		f.DurationVar(&o.trigger.after, "after", 5*time.Second, "with --save-on-pause-over: how much of the stream after the pause to add")
		f.BoolVar(&o.trigger.rearm, "rearm", false, "with --save-on-pause-over: save again at every later long pause (FILE-2, FILE-3, ...) instead of once")
		f.IntVar(&o.trigger.maxMB, "ring-mb", 512, "with --save-on-pause-over: memory bound of the ring, in MB")
	})
}

// triggerOptions are the trigger's flags.
type triggerOptions struct {
	over, before, after time.Duration
	out                 string
	rearm               bool
	maxMB               int
	perm                os.FileMode // of the saved windows (tracePerm)
}

func (t *triggerOptions) check(live bool) error {
	switch {
	case t.over == 0 && t.out == "":
		return nil
	case t.over <= 0:
		return fmt.Errorf("--trace-out needs --save-on-pause-over D")
	case t.out == "":
		return fmt.Errorf("--save-on-pause-over needs --trace-out FILE")
	case !live:
		return fmt.Errorf("--save-on-pause-over applies to live sessions only (--pid, --name or -- COMMAND)")
	case t.before < 0 || t.after < 0 || t.maxMB <= 0:
		return fmt.Errorf("--before, --after and --ring-mb must be positive")
	}
	return nil
}

// ringEvent is a deep copy of one event.
type ringEvent struct {
	ev   nettrace.Event
	size int
}

// pauseTrigger keeps the ring and writes the files.
type pauseTrigger struct {
	o    *triggerOptions
	hdr  *nettrace.Header
	stop func() // ends the live session after a save without --rearm; may be nil

	ring  []ringEvent // oldest first; ring[head:] is live
	head  int
	bytes int
	// sticky holds evicted events that keep the window readable and
	// symbolizable: method and module loads (names for stack addresses).
	sticky []ringEvent

	pending   *gcpause.GC // a pause over the threshold, waiting for --after
	deadline  int64       // event clock: write once an event is past it
	saved     int
	done      bool
	lastTS    int64
	notice    func(string)
	writeErrs []error
}

func newPauseTrigger(o *triggerOptions, hdr *nettrace.Header, stop func(), notice func(string)) *pauseTrigger {
	return &pauseTrigger{o: o, hdr: hdr, stop: stop, notice: notice}
}

// keepForever reports whether an evicted event must stay: metadata-only
// bookkeeping a reader needs to name code in the window.
func keepForever(m *nettrace.Metadata) bool {
	switch m.Runtime {
	case nettrace.Runtime:
		switch m.EventID {
		case 141, 143, 152, 154: // MethodLoad(Verbose), ModuleLoad, AssemblyLoad
			return true
		}
	case nettrace.Rundown, nettrace.EventPipe:
		return true
	}
	return false
}

// event copies ev into the ring, evicts what is older than --before, and
// writes the file when a pending trigger's --after has passed.
func (p *pauseTrigger) event(ev *nettrace.Event) {
	if p.done {
		return
	}
	if ev.Timestamp > p.lastTS {
		p.lastTS = ev.Timestamp
	}
	if p.pending != nil && ev.Timestamp > p.deadline {
		p.save()
		if p.done {
			return
		}
	}
	c := *ev
	c.Payload = append([]byte(nil), ev.Payload...)
	if len(ev.Stack) > 0 {
		c.Stack = append([]uint64(nil), ev.Stack...)
	}
	c.LostBefore = 0
	sz := len(c.Payload) + 8*len(c.Stack) + 160
	p.ring = append(p.ring, ringEvent{c, sz})
	p.bytes += sz
	p.evict()
}

func (p *pauseTrigger) evict() {
	keepFrom := p.lastTS - p.ticks(p.o.before)
	if p.pending != nil {
		// Never drop what the pending window needs.
		keepFrom = min(keepFrom, p.pauseStartTicks(p.pending)-p.ticks(p.o.before))
	}
	limit := p.o.maxMB << 20
	for p.head < len(p.ring) {
		e := &p.ring[p.head]
		if e.ev.Timestamp >= keepFrom && p.bytes <= limit {
			break
		}
		if keepForever(e.ev.Meta) {
			p.sticky = append(p.sticky, *e)
		} else {
			p.bytes -= e.size
		}
		*e = ringEvent{}
		p.head++
	}
	// Compact once the dead prefix is large, so memory stays flat.
	if p.head > 4096 && p.head*2 > len(p.ring) {
		n := copy(p.ring, p.ring[p.head:])
		clear(p.ring[n:])
		p.ring = p.ring[:n]
		p.head = 0
	}
}

func (p *pauseTrigger) ticks(d time.Duration) int64 {
	f := p.hdr.QPCFrequency
	if f <= 0 {
		f = 1_000_000_000
	}
	return int64(d.Seconds() * float64(f))
}

func (p *pauseTrigger) pauseStartTicks(g *gcpause.GC) int64 {
	return p.hdr.SyncTimeQPC + p.ticks(time.Duration(g.PauseStartNanos))
}

// gc is told of every finished GC.
func (p *pauseTrigger) gc(g *gcpause.GC) {
	if p.done || p.pending != nil || !g.Complete || g.PauseNanos <= int64(p.o.over) {
		return
	}
	p.pending = g
	end := p.hdr.SyncTimeQPC + p.ticks(time.Duration(g.PauseEndNanos))
	p.deadline = end + p.ticks(p.o.after)
	p.notice(fmt.Sprintf("GC %d paused %.1f ms (over %v): saving the trace %v after it", g.Number, float64(g.PauseNanos)/1e6, p.o.over, p.o.after))
}

// finish writes a pending trigger at the end of the stream.
func (p *pauseTrigger) finish() {
	if p.pending != nil && !p.done {
		p.save()
	}
}

func (p *pauseTrigger) fileName() string {
	if p.saved == 0 {
		return p.o.out
	}
	ext := filepath.Ext(p.o.out)
	return fmt.Sprintf("%s-%d%s", strings.TrimSuffix(p.o.out, ext), p.saved+1, ext)
}

func (p *pauseTrigger) save() {
	g := p.pending
	p.pending = nil
	name := p.fileName()
	n, err := p.write(name, g)
	if err != nil {
		p.writeErrs = append(p.writeErrs, err)
		p.notice(fmt.Sprintf("saving %s: %v", name, err))
	} else {
		p.saved++
		p.notice(fmt.Sprintf("saved %d events around GC %d to %s", n, g.Number, name))
	}
	if !p.o.rearm {
		p.done = true
		p.ring, p.sticky = nil, nil
		if p.stop != nil {
			p.stop()
		}
	}
}

func (p *pauseTrigger) write(name string, g *gcpause.GC) (int, error) {
	perm := p.o.perm
	if perm == 0 {
		perm = 0o644
	}
	// Written beside name and renamed into place once complete.
	f, err := outfile.Create(name, outfile.Options{Perm: perm})
	if err != nil {
		return 0, err
	}
	defer f.Abort() // a no-op once closed
	w, err := nettrace.NewWriter(f, *p.hdr, nettrace.WriterOptions{})
	if err != nil {
		return 0, err
	}
	from := p.pauseStartTicks(g) - p.ticks(p.o.before)
	n := 0
	for _, e := range p.sticky {
		if err := w.WriteEvent(&e.ev); err != nil {
			return n, err
		}
		n++
	}
	for i := p.head; i < len(p.ring); i++ {
		e := &p.ring[i].ev
		if e.Timestamp < from && !keepForever(e.Meta) {
			continue
		}
		if err := w.WriteEvent(e); err != nil {
			return n, err
		}
		n++
	}
	if err := w.Close(); err != nil {
		return n, err
	}
	return n, f.Close()
}
