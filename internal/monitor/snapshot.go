package monitor

import (
	"github.com/clrspy/clrspy/hang"
	"time"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/counters"
	"github.com/clrspy/clrspy/exceptions"
	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/locks"
	"github.com/clrspy/clrspy/requests"
	"github.com/clrspy/clrspy/threadpool"
	"github.com/clrspy/clrspy/triage"
)

// State is where a session stands.
type State string

// States.
const (
	StateRunning State = "running" // events flow
	StateStopped State = "stopped" // clrspy stopped the session; the target runs on
	StateExited  State = "exited"  // the target exited
	StateEnded   State = "ended"   // a trace file or standard input ended
	StateError   State = "error"   // reading failed (Session.Error)
)

type sessionState struct {
	state      State
	exitCode   *int
	err        string
	name, kind string
	truncated  bool
	endLost    uint64
}

// Session is the state of the event stream.
type Session struct {
	Source string `json:"source"` // what is read: "pid 123 (name)", a file
	Kind   string `json:"kind"`   // file, stdin, attach, launch, listen
	State  State  `json:"state"`
	// ExitCode is the target's exit status when known (a launched
	// program; SetExitCode).
	ExitCode *int   `json:"exit_code,omitempty"`
	Error    string `json:"error,omitempty"`
	// StartUTC is the session's start; ElapsedSec runs from the first to
	// the latest event (the event clock every window uses).
	StartUTC   time.Time `json:"start_utc"`
	ElapsedSec float64   `json:"elapsed_s"`
	Events     uint64    `json:"events"`
	// EventsLost counts events the runtime dropped (sequence gaps): the
	// model misses what they carried.
	EventsLost   uint64 `json:"events_lost"`
	DecodeErrors uint64 `json:"decode_errors"`
	Truncated    bool   `json:"truncated,omitempty"`
}

// Window is the share of a recent stretch of the event clock during which
// the runtime was stopped, each instant counted once however many
// suspensions overlap it.
type Window struct {
	// Seconds is the window's length: 1, 10, 60; 0 for "since the session
	// began".
	Seconds float64 `json:"seconds"`
	// CoveredSec is the part of the window the session covers (shorter
	// than Seconds early on); the percentages are of it.
	CoveredSec float64 `json:"covered_s"`
	// GCPausedPercent counts suspensions for a GC; SuspendedPercent every
	// suspension (debugger, ReJIT, clrspy's own sample profiler...).
	GCPausedPercent  float64 `json:"gc_paused_percent"`
	SuspendedPercent float64 `json:"suspended_percent"`
}

// WindowSeconds are the windows Snapshot reports (0: since the start).
var WindowSeconds = []float64{1, 10, 60, 0}

// GCSummary is every GC since the session began: package gcpause's
// summary of its rollup (clrspy gc --json's summary, its keys inline) and
// what only a live session has.
type GCSummary struct {
	gcpause.Summary
	// StoppedMS is the time the runtime was stopped for GCs (SuspendEEBegin
	// to RestartEEEnd of suspensions for a GC), each moment once, from
	// every GC suspension that ended: GCs still running included
	// (total_pause_ms counts the stops of complete GCs).
	StoppedMS float64 `json:"gc_stopped_ms"`
	// PauseHistogram is gcpause's (Stats.Histogram); GenPauseHistograms
	// the same per generation (gen0, gen1, gen2).
	PauseHistogram     analysis.Histogram    `json:"pause_histogram"`
	GenPauseHistograms [3]analysis.Histogram `json:"generation_pause_histograms"`
	// SuspendHistogram is the time to suspend (SuspendEEBegin to End) of
	// every GC whose start the session saw.
	SuspendHistogram analysis.Histogram `json:"suspend_histogram"`
	// Longest is the GC with the longest pause (nil before the first); a
	// GC whose pause began before the session (a lower bound) is left out,
	// as in clrspy gc.
	Longest *gcpause.GCRow `json:"longest"`
	// Last is the latest GC (complete or not).
	Last *gcpause.GCRow `json:"last"`
	// HeapSizeAfterBytes is each generation's size after the last GC that
	// reported it: gen0, gen1, gen2, LOH, POH.
	HeapSizeAfterBytes [5]gcpause.Opt `json:"heap_size_after_bytes"`
	// PromotedBytes sums what GCs promoted out of each generation (gen0,
	// gen1, gen2, LOH, POH) since the session began.
	PromotedBytes [5]uint64 `json:"promoted_bytes"`
	// AllocRateBytesPerSec is the allocation rate: the runtime's counter
	// when the session has it (AllocRateFrom "counters"), else gen0
	// allocations of the GCs of the last 10 s ("gcs").
	AllocRateBytesPerSec gcpause.Opt `json:"alloc_rate_bytes_per_sec"`
	AllocRateFrom        string      `json:"alloc_rate_from,omitempty"`
	// BeforeSession is what the runtime counted before the session (nil:
	// it did not say; the counts above run from the session's start).
	BeforeSession *BeforeSession `json:"before_session,omitempty"`
	// NumberedBefore is how many GCs the runtime had numbered before the
	// first one the session saw (GCStart's Count less one; 0 before any):
	// without BeforeSession the counts above lack them, and their
	// generations are not known.
	NumberedBefore int `json:"gcs_numbered_before_session"`
}

// Snapshot is a deep copy of the model: nothing in it is shared with the
// Monitor, so it may be kept, read and serialised while events flow.
type Snapshot struct {
	// Time is the wall-clock time of the latest event.
	Time    time.Time `json:"time"`
	Process Process   `json:"process"`
	Session Session   `json:"session"`
	GC      GCSummary `json:"gc"`
	// Windows: last 1 s, 10 s, 60 s, and since the session began.
	Windows []Window `json:"windows"`
	// GCs are the most recent GCs, oldest first (Options.MaxGCs).
	GCs []gcpause.GCRow `json:"gcs"`
	// Suspensions are the most recent runtime suspensions that were not a
	// GC's, oldest first (the sample profiler's are only counted).
	Suspensions []gcpause.SuspensionRow `json:"suspensions"`
	Locks       LockSummary             `json:"locks"`
	// CPU is set when the monitor keeps samples (Options.CPU).
	CPU *CPUProfile `json:"cpu,omitempty"`
	// Exceptions is set with Options.Exceptions.
	Exceptions *ExceptionsSummary `json:"exceptions,omitempty"`
	// Counters is set unless Options.NoCounters.
	Counters *counters.Result `json:"counters,omitempty"`
	// Rollup is package gcpause's rollup of every GC and suspension since
	// the session began: what a file's report computes from the same
	// events (stopped time with overlaps once, percentiles, counts by
	// generation, type and reason), so a live page shows the same figures.
	// Its GC rows are left out (GCs above are the monitor's).
	Rollup *gcpause.Result `json:"-"`
	// LocksResult is package locks' result behind Locks: the tables a
	// file's report shows (owners, waiting stacks), for a live page.
	LocksResult *locks.Result `json:"-"`
	// OpenLockWaits are the lock waits open at the latest event (package
	// hang's wait-for graph), Threads the distinct threads the stream
	// showed, Sampled whether it had the runtime sample profiler's
	// samples: what triage reads of a stream beside its analyses.
	OpenLockWaits []hang.OpenLockWait `json:"-"`
	Threads       int                 `json:"-"`
	Sampled       bool                `json:"-"`
	// Tally is triage's count of every GC since the session began
	// (triage.GCTally: blocking gen2 and LOH-triggered GCs, the memory
	// trend, the heap snapshots' GCs), as a file's triage counts them.
	Tally *triage.GCTally `json:"-"`
	// ThreadPool is set with Options.ThreadPool.
	ThreadPool *ThreadPoolSummary `json:"thread_pool,omitempty"`
	// ThreadPoolResult is package threadpool's result behind ThreadPool
	// (episodes, blocking sites): what a file's report shows, for a live
	// page. Its times count from ThreadPoolFirstNanos (ns since the
	// session start). Snapshots share it while the pool's events have not
	// changed it: read it, do not modify it.
	ThreadPoolResult     *threadpool.Result `json:"-"`
	ThreadPoolFirstNanos int64              `json:"-"`
	// ExceptionsResult is package exceptions' result behind Exceptions
	// (every type, site, pattern and the rate over time), for a live page;
	// shared as ThreadPoolResult is.
	ExceptionsResult *exceptions.Result `json:"-"`
	// Requests is package requests' result since the session began
	// (Options.Requests; nil without): what clrspy requests reports of the
	// same events. Its GCs list the latest Options.MaxGCs only.
	Requests *requests.Result `json:"-"`
}

// Snapshot copies the model. It may be called from any goroutine.
func (m *Monitor) Snapshot() *Snapshot {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := &Snapshot{
		Time:    m.hdr.SyncTimeUTC.Add(time.Duration(m.now)).UTC(),
		Process: m.proc,
		Session: Session{
			Source: m.sess.name, Kind: m.sess.kind, State: m.sess.state, Error: m.sess.err,
			StartUTC: m.hdr.SyncTimeUTC.UTC(), Events: m.events, EventsLost: max(m.lost, m.sess.endLost),
			Truncated: m.sess.truncated,
		},
		GCs:         m.gcs.Slice(),
		Suspensions: m.susps.Slice(),
	}
	s.Locks, s.LocksResult = m.lock.summary(m.opts.topLocks())
	s.OpenLockWaits = m.lock.graph.OpenLockWaits(m.lock.last)
	s.Threads, s.Sampled = len(m.threads), m.sampled
	s.Tally = m.tally.Clone()
	s.Rollup = m.gc.Result()
	// The records are the analyzer's and may still change: not shared
	// (the longest GC's is copied, final once it is the longest).
	s.Rollup.GCs, s.Rollup.Suspensions = nil, nil
	if l := s.Rollup.Longest; len(l) > 0 {
		r := gcpause.NewGCRow(l[0])
		s.GC.Longest = &r
		c := *l[0]
		s.Rollup.Longest = []*gcpause.GC{&c}
	}
	if m.sess.exitCode != nil {
		c := *m.sess.exitCode
		s.Session.ExitCode = &c
	}
	if m.tp != nil {
		t := m.tp.Totals()
		s.ThreadPool = threadPoolSummary(t)
		s.ThreadPoolResult, s.ThreadPoolFirstNanos = m.threadPoolResult(t.Starving), m.tp.FirstNanos()
	}
	if m.req != nil {
		s.Requests = m.req.Result()
	}
	// Every analysis' payloads that did not decode (the CPU window's and
	// the exceptions' too, as Stats counts them).
	s.Session.DecodeErrors = m.statsLocked().DecodeErrors
	elapsed := m.now - m.first
	if m.seen {
		s.Session.ElapsedSec = float64(elapsed) / 1e9
	}
	s.Process.GC = m.gc.Flavor(s.Process.fromRunInfo(m.run.Result()))
	if !s.Process.StartUTC.IsZero() {
		s.Process.UptimeSec = s.Time.Sub(s.Process.StartUTC).Seconds()
		s.Process.UptimeFromStart = true
	} else {
		s.Process.UptimeSec = s.Session.ElapsedSec
	}
	m.gcSummary(&s.GC, s.Rollup, elapsed)
	for _, w := range WindowSeconds {
		s.Windows = append(s.Windows, m.window(w, elapsed))
	}
	if m.cpu != nil {
		s.CPU = m.cpu.profile(m.now, m.opts.topMethods(), m.opts.flameMaxNodes())
	}
	if m.exc != nil {
		s.Exceptions = exceptionsSummary(m.exc, m.opts.topExcTypes(), m.opts.topThrowSites())
		s.ExceptionsResult = m.exceptionsResult()
	}
	if m.ctr != nil {
		s.Counters = m.ctr.Result()
		if ta, ok := s.Counters.Get("dotnet.gc.heap.total_allocated"); ok && ta.HasRate {
			s.GC.AllocRateBytesPerSec, s.GC.AllocRateFrom = gcpause.Opt(ta.Rate), "counters"
		}
	}
	return s
}

// threadPoolResult is the thread-pool analysis' result, built again only
// when what it shows may have changed: the pool's events, the counters it
// reads the queue from, the symbols that name its sites, and (while an
// episode lasts, its end being the stream's latest event) the clock.
func (m *Monitor) threadPoolResult(starving bool) *threadpool.Result {
	key := [4]int64{int64(m.tp.Stats().Events), 0, int64(m.sym.Len()), 0}
	if m.ctr != nil {
		key[1] = int64(m.ctr.Stats().Events)
	}
	if starving {
		key[3] = m.now
	}
	if m.tpRes == nil || key != m.tpKey {
		m.tpRes, m.tpKey = m.tp.Result(), key
	}
	return m.tpRes
}

// exceptionsResult is the exception analysis' result, built again only
// after new exception events or symbols.
func (m *Monitor) exceptionsResult() *exceptions.Result {
	key := [2]int64{int64(m.exc.Stats().Events), int64(m.sym.Len())}
	if m.excRes == nil || key != m.excKey {
		m.excRes, m.excKey = m.exc.Result(), key
	}
	return m.excRes
}

func (m *Monitor) gcSummary(g *GCSummary, roll *gcpause.Result, elapsed int64) {
	// Counts, sums, maxima, percentiles and the longest GC are gcpause's
	// rollup, as clrspy gc --json's summary (a GC begun before the session
	// counts, its lower-bound pause left out of maxima and histograms).
	g.Summary = gcpause.NewSummary(roll)
	for i := range g.GenPauseHistograms {
		g.GenPauseHistograms[i] = roll.ByGen[i].Histogram
	}
	g.StoppedMS = ms(m.gcStopped.total)
	if b := m.seed.before; b != nil {
		c := *b
		g.BeforeSession = &c
	}
	g.NumberedBefore = m.numberedBefore()
	g.PauseHistogram = roll.All.Histogram
	g.SuspendHistogram = roll.All.SuspendHistogram
	if m.hasLast {
		r := m.last
		g.Last = &r
	}
	g.HeapSizeAfterBytes = m.heapAfter
	g.PromotedBytes = m.promoted
	g.AllocRateBytesPerSec = gcpause.Unknown
	const span = int64(10 * time.Second)
	var sum uint64
	n := 0
	for ; n < m.gen0Alloc.Len() && m.gen0Alloc.Back(n).ns > m.now-span; n++ {
		sum += m.gen0Alloc.Back(n).bytes
	}
	if n > 0 {
		g.AllocRateBytesPerSec = gcpause.Opt(float64(sum) / (float64(min(span, max(elapsed, 1))) / 1e9))
		g.AllocRateFrom = "gcs"
	}
}

func (m *Monitor) window(sec float64, elapsed int64) Window {
	w := Window{Seconds: sec}
	span := elapsed
	if sec > 0 {
		span = min(span, int64(sec*1e9))
	}
	if span <= 0 {
		return w
	}
	w.CoveredSec = float64(span) / 1e9
	t0 := m.now - span
	w.GCPausedPercent = float64(m.gcStopped.in(t0, m.now, m.openSince(true))) * 100 / float64(span)
	w.SuspendedPercent = float64(m.anyStopped.in(t0, m.now, m.openSince(false))) * 100 / float64(span)
	return w
}
