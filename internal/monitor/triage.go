package monitor

import (
	"fmt"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/counters"
	"github.com/clrspy/clrspy/triage"
)

// TriageEnv is what a live surface knows about the target besides the
// monitor: how to name it in a next command, the machine's cores, its
// thread count and its CPU demand over the window (from /proc; 0 and -1
// when unknown).
type TriageEnv struct {
	Target       string
	Cores        int
	Threads      int
	CPUDemandPct float64
}

// TriageFacts turns what changed between two snapshots of one monitor
// (prev nil: since the session began) into triage's facts, so serve can
// judge a target from its always-on model without a session of its own.
// What the monitor does not keep is left out: pinned objects and
// fragmentation (not in GC rows), the counters' peaks (only their values
// now), the lock waits' stacks. GC rows are the kept ones
// (Options.MaxGCs): the per-GC figures cover those in the window.
func TriageFacts(prev, cur *Snapshot, env TriageEnv) *triage.Facts {
	f := &triage.Facts{Target: env.Target}
	f.WindowSec = cur.Session.ElapsedSec
	var since = cur.Session.StartUTC
	var pg GCSummary
	var pl LockSummary
	if prev != nil {
		f.WindowSec -= prev.Session.ElapsedSec
		since = prev.Time
		pg, pl = prev.GC, prev.Locks
	}
	g := &f.GC
	g.Seen = f.WindowSec > 0
	g.Count = cur.GC.Count - pg.Count
	g.PausedMs = cur.GC.TotalPauseRuntimeMS - pg.TotalPauseRuntimeMS
	if f.WindowSec > 0 {
		g.PausePct = g.PausedMs / 10 / f.WindowSec
	}
	for i := range cur.GC.Generations {
		g.Induced += cur.GC.Generations[i].Induced - pg.Generations[i].Induced
	}
	if v := cur.GC.AllocRateBytesPerSec; v.Valid() {
		g.AllocMBPerSec, g.HasAllocRate = float64(v)/(1<<20), true
	}
	m := &f.Memory
	var firstT, lastT float64
	for i := range cur.GCs {
		r := &cur.GCs[i]
		if !r.Complete || !r.StartUTC.After(since) {
			continue
		}
		if r.PauseMS > g.MaxPauseMs {
			g.MaxPauseMs, g.MaxPauseGC, g.MaxPauseReason, g.MaxPauseType, g.MaxPauseGen = r.PauseMS, r.Number, r.Reason, r.Type, r.Generation
		}
		g.MaxSuspendMs = max(g.MaxSuspendMs, r.SuspendMS)
		if r.Generation == 2 && r.Type == clrevents.GCNonConcurrent.String() {
			g.Gen2Blocking++
		}
		if r.Reason == clrevents.ReasonAllocLarge.String() || r.Reason == clrevents.ReasonOutOfSpaceLOH.String() {
			g.LOHTriggered++
		}
		if !r.GenSizeAfterBytes[2].Valid() {
			continue
		}
		old := float64(r.GenSizeAfterBytes[2]) + r.GenSizeAfterBytes[3].Or(0) + r.GenSizeAfterBytes[4].Or(0)
		old /= 1 << 20
		if m.GCs == 0 {
			m.FirstOldMB, firstT = old, r.StartMS
		}
		m.GCs++
		m.LastOldMB, lastT = old, r.StartMS
		m.Gen2MB, m.LOHMB = float64(r.GenSizeAfterBytes[2])/(1<<20), r.GenSizeAfterBytes[3].Or(0)/(1<<20)
	}
	m.Seen = m.GCs > 0
	m.SpanSec = (lastT - firstT) / 1e3
	if m.SpanSec > 0 {
		m.OldGrowthMBMin = (m.LastOldMB - m.FirstOldMB) * 60 / m.SpanSec
	}
	l := &f.Locks
	l.Seen = f.WindowSec > 0
	l.Contentions = int64(cur.Locks.Waits - pl.Waits)
	l.WaitMs = cur.Locks.TotalWaitMS - pl.TotalWaitMS
	l.Threads = env.Threads
	tpThreads, _ := counterValue(cur.Counters, "dotnet.thread_pool.thread.count")
	if l.Threads <= 0 {
		l.Threads = int(tpThreads) + 1 // the pool's and the main thread: a guess
	}
	if f.WindowSec > 0 && l.Threads > 0 {
		l.WaitPct = l.WaitMs / 10 / (f.WindowSec * float64(l.Threads))
	}
	if len(cur.Locks.Top) > 0 && cur.Locks.Top[0].LockID != 0 {
		t := cur.Locks.Top[0]
		l.TopLock, l.TopWaitMs, l.TopCount = fmt.Sprintf("lock 0x%x", t.LockID), t.TotalWaitMS, int64(t.Waits)
	}
	tp := &f.ThreadPool
	tp.Source = "counters"
	if q, ok := counterValue(cur.Counters, "dotnet.thread_pool.queue.length"); ok {
		tp.Seen, tp.QueueMax, tp.QueueLast = true, q, q
	}
	tp.ThreadsMax, tp.ThreadsFirst = tpThreads, tpThreads
	if prev != nil {
		if v, ok := counterValue(prev.Counters, "dotnet.thread_pool.thread.count"); ok {
			tp.ThreadsFirst = v
			tp.ThreadsMax = max(v, tpThreads)
		}
	}
	if cur.Counters != nil {
		if mt, ok := cur.Counters.Get("dotnet.thread_pool.work_item.count"); ok {
			tp.CompletedPerSec = mt.Rate
		}
	}
	x := &f.Exceptions
	x.Source = "counters"
	if cur.Counters != nil {
		x.Seen = tp.Seen
		if mt, ok := cur.Counters.Get("dotnet.exceptions"); ok {
			x.Seen = true
			x.PerSec = mt.Rate
			// A window shorter than the counters' interval may hold no new
			// publication: the same total at both ends says nothing of the
			// window (not "no exceptions"), so the last published rate
			// stands for it (seen: "calm, 0.0/s" over 0.9 s of a storm).
			if pv, ok := counterValue(prev.counters(), "dotnet.exceptions"); ok && f.WindowSec > 0 && (pv != mt.Value || mt.Rate == 0) {
				x.Count = mt.Value - pv
				x.PerSec = x.Count / f.WindowSec
			} else {
				x.Count = mt.Rate * f.WindowSec
			}
		}
	}
	c := &f.CPU
	c.Cores, c.UsagePct = env.Cores, -1
	if v, ok := counterValue(cur.Counters, "cpu-usage"); ok {
		c.UsagePct = v
	}
	switch {
	case env.CPUDemandPct >= 0 && env.Cores > 0:
		c.Source, c.Seen, c.Pct = "schedstat", true, env.CPUDemandPct
	case c.UsagePct >= 0:
		c.Source, c.Seen, c.Pct = "counters", true, c.UsagePct
	}
	return f
}

func (s *Snapshot) counters() *counters.Result {
	if s == nil {
		return nil
	}
	return s.Counters
}

func counterValue(r *counters.Result, name string) (float64, bool) {
	if r == nil {
		return 0, false
	}
	return r.Value(name)
}
