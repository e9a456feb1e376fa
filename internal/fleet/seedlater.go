package fleet

import (
	"context"
	"strconv"
	"time"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/counters"
	"github.com/clrspy/clrspy/internal/monitor"
	"github.com/clrspy/clrspy/internal/procfs"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/source"
)

// seedWithin bounds the second session seedLater opens.
const seedWithin = 30 * time.Second

// seedMinAge is how old an attached process must be before seedLater opens
// its meter session. A .NET 10 process that exits within about a second of
// a meter session's start may hang at exit (meterMinAge); at 10 s the
// second session met processes that live a little longer (a 12 s job hung
// at exit in serve's tests, 2 runs of 4), so it waits until a process has
// outlived what short jobs and tests run.
const seedMinAge = 30 * time.Second

// seedLater gives a session opened without the runtime's meter (a process
// attached before it ran meterMinAge) its totals since the process start:
// once the process is seedMinAge old, and while the monitor's GC
// counts lack what came before the session (monitor.NeedsSeed: the GC
// events' numbering says whether any GC did), a second, short session asks
// for the meter alone, and the monitor takes its publications' totals,
// less the GCs it counted by then by their numbers (monitor.SeedFrom).
// The session ends once seeded, at ctx's end, or after seedWithin.
func (t *Source) seedLater(ctx context.Context, m *monitor.Monitor) {
	start, err := procfs.StartTime(t.pid)
	if err != nil {
		return
	}
	if !Sleep(ctx, time.Until(start.Add(seedMinAge))) || !m.NeedsSeed() || !t.alive() {
		return
	}
	co := counters.Options{Meter: true, Interval: t.f.cfg.counterInterval()}
	st, err := t.Open(source.Spec{Providers: counters.Providers(&co), NoStackwalk: true, ReadEvery: 500 * time.Millisecond})
	if err != nil {
		t.f.log.Debug("no session to read the runtime's totals before the attach", "pid", t.pidLabel, "error", ErrLine(err))
		return
	}
	defer st.Close()
	stopCtx := context.AfterFunc(ctx, st.Stop)
	defer stopCtx()
	tm := time.AfterFunc(seedWithin, st.Stop)
	defer tm.Stop()
	sd := &seeder{ctr: counters.New(st.Header(), co), m: m, stop: st.Stop}
	st.Run(sd)
	if m.Seeded() {
		t.f.log.Debug("totals seeded from the runtime's meter", "pid", t.pidLabel, "process", t.name)
	}
}

// seeder feeds a meter session's counters and hands each full publication
// of the totals to the monitor.
type seeder struct {
	ctr  *counters.Analyzer
	m    *monitor.Monitor
	stop func()
	last [4]int64 // the totals' update times last handed
	done bool
}

func (s *seeder) Event(ev *nettrace.Event) {
	s.ctr.Event(ev)
	if s.done || !s.ctr.SawMeter() {
		return
	}
	r := s.ctr.Result()
	var at [4]int64
	for g := range 3 {
		c, ok := r.Get("dotnet.gc.collections", counters.AttrGeneration+"=gen"+strconv.Itoa(g))
		if !ok {
			return
		}
		at[g] = c.UpdatedNanos
	}
	p, ok := r.Get("dotnet.gc.pause.time")
	if !ok {
		return
	}
	at[3] = p.UpdatedNanos
	for i := range at {
		if at[i] == s.last[i] {
			return // not yet a new publication of every total
		}
	}
	s.last = at
	s.m.SeedFrom(r, ev.Timestamp)
	if s.m.Seeded() {
		s.done = true
		s.stop()
	}
}

func (s *seeder) Stats() analysis.Stats { return s.ctr.Stats() }
