package monitor

import (
	"cmp"
	"math"
	"slices"

	"github.com/clrspy/clrspy/gcpause"
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
	// HeapDumpGCs are the GCs heap snapshots of the target induced (their
	// sessions' gcpause HeapDump mark): the tool's, kept out of the
	// application's induced GCs, pauses and stopped time.
	HeapDumpGCs []uint32
}

// TriageFacts turns a snapshot of one monitor into triage's facts since
// the session began, for the clrspy_findings gauge, by triage's own
// functions over the analyses' results the snapshot holds, as triage's
// Analyzer makes its facts (one judgement on every surface,
// TestOneJudgementEverySurface): the pause rollup (triage.PauseFacts),
// the heap series (MemoryFrom), the locks' result, hang's open waits and
// the stream's threads (LocksFrom), the counters (CountersFrom, their
// values now standing for the window's peaks: PeaksNow), the thread-pool,
// exception and request results (ThreadPoolFrom, ExceptionsFrom,
// RequestsFrom), the CPU window's profile and /proc's readings (CPUFrom).
// What the monitor does not keep is left out: pinned objects and
// fragmentation (not in GC rows), the counters' peaks and cpu-usage's
// mean, the lock types' names and waiting stacks (Options: no object
// types), the top methods without Options.CPU. The per-GC counts (blocking
// gen2, LOH-triggered) and the heap series cover the kept rows
// (Options.MaxGCs).
func TriageFacts(cur *Snapshot, env TriageEnv) *triage.Facts {
	f := &triage.Facts{Target: env.Target}
	// The heap snapshots' GCs: another session's (env) and the stream's
	// own (gcpause's mark).
	dumps := env.HeapDumpGCs
	for _, n := range cur.HeapDumpGCs {
		if !slices.Contains(dumps, n) {
			dumps = append(slices.Clip(dumps), n)
		}
	}
	f.WindowSec = cur.Session.ElapsedSec
	g := &f.GC
	// A heap snapshot's GC is an induced one: found among the induced
	// GCs kept (however many GCs followed), else among the kept rows.
	var snap triage.Snapshot
	var counted []uint32
	for _, rows := range [][]gcpause.GCRow{cur.InducedGCs, cur.GCs} {
		for i := range rows {
			r := &rows[i]
			if r.Complete && slices.Contains(dumps, r.Number) && !slices.Contains(counted, r.Number) {
				counted = append(counted, r.Number)
				snap.GC = cmp.Or(snap.GC, r.Number)
				snap.Count++
				snap.PauseNanos += int64(r.PauseRuntimeMS.Or(0) * 1e6)
				snap.StopNanos += int64(r.PauseMS * 1e6)
			}
		}
	}
	if cur.Rollup != nil {
		triage.PauseFacts(g, cur.Rollup, int64(f.WindowSec*1e9), snap)
	}
	if l := cur.GC.Longest; l != nil {
		g.MaxPauseGC, g.MaxPauseReason, g.MaxPauseType, g.MaxPauseGen = l.Number, l.Reason.String(), l.Type.String(), l.Generation
	}
	g.ProfilerInStream = cur.Sampled
	m := &f.Memory
	var pts []triage.HeapPoint
	for i := range cur.GCs {
		r := &cur.GCs[i]
		if !r.Complete {
			continue
		}
		if triage.Gen2Blocking(r.Generation, r.Type) && !slices.Contains(dumps, r.Number) {
			g.Gen2Blocking++
		}
		if triage.LOHTriggered(r.Reason) {
			g.LOHTriggered++
		}
		if !r.GenSizeMB[2].Valid() {
			continue
		}
		// triage's MB are binary (MiB), the row's decimal.
		mib := func(v gcpause.Opt) float64 { return v.Or(0) * 1e6 / (1 << 20) }
		old := mib(r.GenSizeMB[2]) + mib(r.GenSizeMB[3]) + mib(r.GenSizeMB[4])
		pts = append(pts, triage.HeapPoint{Nanos: int64(math.Round(r.GCStartMS * 1e6)), OldMB: old})
		m.Gen2MB, m.LOHMB = mib(r.GenSizeMB[2]), mib(r.GenSizeMB[3])
	}
	triage.MemoryFrom(m, len(pts), pts)
	l := &f.Locks
	l.Seen = f.WindowSec > 0
	threads := env.Threads
	if threads <= 0 {
		threads = cur.Threads // the stream's threads, as triage counts them
	}
	if cur.LocksResult != nil {
		triage.LocksFrom(l, cur.LocksResult, threads, int64(f.WindowSec*1e9), cur.OpenLockWaits)
	}
	peaks := triage.PeaksNow(cur.Counters)
	triage.CountersFrom(f, cur.Counters, peaks)
	// The analyses' results refine the counters' facts as triage's
	// contributors refine them (the same functions).
	triage.ThreadPoolFrom(f, cur.ThreadPoolResult)
	triage.ExceptionsFrom(f, cur.ExceptionsResult)
	triage.RequestsFrom(f, cur.Requests)
	var ms []triage.Method
	src := ""
	if cur.CPU != nil && cur.CPU.Profile != nil {
		ms, src = triage.TopLeafMethods(cur.CPU.Profile, 5), "eventpipe"
	}
	p := triage.Readings{Cores: env.Cores, DemandPct: -1}
	if env.CPUDemandPct >= 0 && env.Cores > 0 {
		p.DemandPct = env.CPUDemandPct
	}
	triage.CPUFrom(&f.CPU, p, peaks.CPUUsagePct, ms, src)
	return f
}
