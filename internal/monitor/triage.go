package monitor

import (
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

// TriageFacts judges a snapshot of one monitor since its session began,
// for the clrspy_findings gauge and top's banner, by the composition
// triage's Analyzer judges a stream with (triage.FactsFrom: one judgement
// on every surface, TestOneJudgementEverySurface), over the analyses'
// results the snapshot holds: the pause rollup and the GC tally, the
// locks' result, hang's open waits and the stream's threads, the counters
// (their values now standing for the window's peaks: PeaksNow), the
// thread-pool, exception and request results, the CPU window's profile.
// What the monitor does not keep is left out: the counters' peaks and
// cpu-usage's mean, the lock types' names and waiting stacks (Options: no
// object types), the top methods without Options.CPU.
func TriageFacts(cur *Snapshot, env TriageEnv) *triage.Facts {
	in := &triage.Inputs{Target: env.Target, WindowNanos: int64(cur.Session.ElapsedSec * 1e9), Pauses: cur.Rollup, GCs: cur.Tally,
		HeapDumps: env.HeapDumpGCs, Sampled: cur.Sampled, LocksSeen: cur.Session.ElapsedSec > 0, Locks: cur.LocksResult,
		Threads: env.Threads, OpenWaits: cur.OpenLockWaits, Counters: cur.Counters, Peaks: triage.PeaksNow(cur.Counters),
		ThreadPool: cur.ThreadPoolResult, Exceptions: cur.ExceptionsResult, Requests: cur.Requests,
		CPU: triage.Readings{Cores: env.Cores, DemandPct: -1}}
	if in.Threads <= 0 {
		in.Threads = cur.Threads // the stream's threads, as triage counts them
	}
	if env.CPUDemandPct >= 0 && env.Cores > 0 {
		in.CPU.DemandPct = env.CPUDemandPct
	}
	if cur.CPU != nil {
		in.Profile = cur.CPU.Profile
	}
	return triage.FactsFrom(in)
}
