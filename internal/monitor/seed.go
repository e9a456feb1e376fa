package monitor

import (
	"strconv"

	"github.com/clrspy/clrspy/counters"
)

// BeforeSession is what the runtime counted before the session began, so
// that totals run from the process start as the OpenTelemetry semantic
// conventions define them: the System.Runtime meter's (.NET 9+)
// dotnet.gc.collections and dotnet.gc.pause.time at their first
// publication, less what the session had seen by then (the GCs it saw
// start, the pauses of the GCs it saw end). Without the meter (earlier
// runtimes, or a session without it) the runtime does not say: the
// EventCounters give increments since the session began.
type BeforeSession struct {
	// Generations are the GCs of gen0, gen1 and gen2 (exclusive counts).
	Generations [3]int `json:"generations"`
	// PauseRuntimeMS is their pause time by the runtime's definition
	// (GC.GetTotalPauseDuration), the only one it keeps.
	PauseRuntimeMS float64 `json:"pause_runtime_ms"`
	// LockContentions are the Monitor lock contentions
	// (dotnet.monitor.lock_contentions).
	LockContentions uint64 `json:"lock_contentions"`
}

// seedState is the seeding's progress.
type seedState struct {
	done     bool
	attempts int   // counter events looked at before the meter's totals came
	pubs     int   // publications of the totals taken
	last     int64 // the latest one's time
	before   *BeforeSession
}

// maxSeedAttempts bounds the counter events looked at for the runtime's
// totals (a meter session that never publishes them, as another meter's
// only, stops being asked).
const maxSeedAttempts = 256

// seedPublications is how many publications of the totals are taken. The
// runtime reads its counts in the meter's callback and writes the event
// after it: a GC that starts or ends in between is in the session's count
// but not in the meter's, and that publication's figure is one GC low,
// never high. The largest of a few publications is the right one but
// when every one of them raced with a GC.
const seedPublications = 4

// trySeed takes the runtime's totals from the meter's publications (m.mu
// held; called after a counter event while not done).
func (m *Monitor) trySeed() {
	r := m.ctr.Result()
	roll := m.gc.Result()
	var b BeforeSession
	var at int64
	for g := range b.Generations {
		c, ok := r.Get("dotnet.gc.collections", counters.AttrGeneration+"=gen"+strconv.Itoa(g))
		if !ok || c.Source != counters.SourceMeter || !c.FromStart {
			m.seedMissing()
			return
		}
		// A GC counts in the runtime's figure from its start: the ones
		// in flight are the session's already. One the session gave up
		// (incomplete) is in neither count: it lands in the seed, so the
		// total still counts it.
		b.Generations[g] = max(int(c.Value)-roll.ByGen[g].Count-max(m.started[g]-m.resolved[g], 0), 0)
		at = c.UpdatedNanos
	}
	p, ok := r.Get("dotnet.gc.pause.time")
	if !ok || p.Source != counters.SourceMeter || !p.FromStart {
		m.seedMissing()
		return
	}
	b.PauseRuntimeMS = max(p.Value*1e3-ms(roll.All.RuntimeNanos), 0)
	if c, ok := r.Get("dotnet.monitor.lock_contentions"); ok && c.Source == counters.SourceMeter && c.FromStart && c.Value > float64(m.lock.starts) {
		b.LockContentions = uint64(c.Value) - m.lock.starts
	}
	if at == m.seed.last && m.seed.before != nil {
		return // the same publication
	}
	m.seed.last = at
	m.seed.pubs++
	if o := m.seed.before; o != nil {
		for g := range b.Generations {
			b.Generations[g] = max(b.Generations[g], o.Generations[g])
		}
		b.PauseRuntimeMS = max(b.PauseRuntimeMS, o.PauseRuntimeMS)
		b.LockContentions = max(b.LockContentions, o.LockContentions)
	}
	m.seed.before = &b
	m.seed.done = m.seed.pubs >= seedPublications
}

// seedMissing counts a look that found no totals, and gives up after
// maxSeedAttempts.
func (m *Monitor) seedMissing() {
	m.seed.attempts++
	m.seed.done = m.seed.attempts > maxSeedAttempts
}

// numberedGC is one GC the session counted (gcpause's rollup: complete),
// by the runtime's own number for it (GCStart's Count).
type numberedGC struct {
	number       uint32
	gen          int8
	runtimeNanos int64
}

// recentNumbered is how many of the latest counted GCs are kept while the
// totals are not seeded: a seed from another session (SeedFrom) takes off
// the ones numbered after its publication.
const recentNumbered = 1024

// numbering is what the session knows of the runtime's GC numbers.
type numbering struct {
	first   uint32 // the lowest number the session saw (0: none yet)
	recent  [recentNumbered]numberedGC
	n       int // GCs pushed into recent
	pending *sideSeed
}

// sideSeed is a publication of another session's meter waiting for this
// session's events to reach its time.
type sideSeed struct {
	at       int64 // the publication's timestamp (the process's clock)
	gens     [3]int
	pauseMS  float64
	locks    float64
	hasLocks bool
}

// noteNumber records the number of a GC the session saw begin or end.
func (m *Monitor) noteNumber(n uint32) {
	if n > 0 && (m.num.first == 0 || n < m.num.first) {
		m.num.first = n
	}
}

// noteCounted records a GC the rollup counted (m.mu held).
func (m *Monitor) noteCounted(number uint32, gen int, runtimeNanos int64) {
	if m.seed.before != nil && m.seed.done {
		return
	}
	m.num.recent[m.num.n%recentNumbered] = numberedGC{number: number, gen: int8(min(max(gen, 0), 2)), runtimeNanos: runtimeNanos}
	m.num.n++
}

// numberedBefore is how many GCs the runtime numbered before the first
// one the session saw.
func (m *Monitor) numberedBefore() int {
	if m.num.first == 0 {
		return 0
	}
	return int(m.num.first) - 1
}

// NeedsSeed reports whether the session's GC totals lack what the runtime
// counted before it: no seed yet, and the session saw no GC or its first
// was numbered after 1.
func (m *Monitor) NeedsSeed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.seed.before == nil && m.num.first != 1
}

// Seeded reports whether the totals since the process start are known
// (BeforeSession) from enough publications.
func (m *Monitor) Seeded() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.seed.before != nil && m.seed.done
}

// SeedFrom takes the runtime's totals since the process start from the
// counters of another session on the same process, one that asked for the
// System.Runtime meter (serve opens one on an attached process once it is
// old enough to ask, serve.meterMinAge). at is the raw timestamp of the
// counter event r was last updated by (the process's clock, which both
// sessions' events carry). The publication is applied once this session's
// events reach at, so that the GCs it counts are delivered; of those, the
// ones numbered after the publication (its generations' sum is the number
// of GCs the runtime had counted) are not taken off. A publication whose
// generations do not add up to the GCs numbered before the session is
// skipped; two that agree end the seeding (Seeded). It reports whether r
// held the totals.
func (m *Monitor) SeedFrom(r *counters.Result, at int64) bool {
	var s sideSeed
	s.at = at
	for g := range s.gens {
		c, ok := r.Get("dotnet.gc.collections", counters.AttrGeneration+"=gen"+strconv.Itoa(g))
		if !ok || c.Source != counters.SourceMeter || !c.FromStart {
			return false
		}
		s.gens[g] = int(c.Value)
	}
	p, ok := r.Get("dotnet.gc.pause.time")
	if !ok || p.Source != counters.SourceMeter || !p.FromStart {
		return false
	}
	s.pauseMS = p.Value * 1e3
	if c, ok := r.Get("dotnet.monitor.lock_contentions"); ok && c.Source == counters.SourceMeter && c.FromStart {
		s.locks, s.hasLocks = c.Value, true
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.seed.done && m.seed.before != nil {
		return true
	}
	m.num.pending = &s
	if m.seen && m.lastRaw >= at {
		m.applySideSeed()
	}
	return true
}

// applySideSeed applies the pending publication of another session (m.mu
// held; this session's events reached its time).
func (m *Monitor) applySideSeed() {
	s := m.num.pending
	m.num.pending = nil
	roll := m.gc.Result()
	total := s.gens[0] + s.gens[1] + s.gens[2]
	// The session's counted GCs numbered after the publication's count
	// are not in it.
	var after [3]int
	var afterNanos int64
	kept := min(m.num.n, recentNumbered)
	oldest := ^uint32(0)
	for i := range kept {
		e := m.num.recent[(m.num.n-1-i)%recentNumbered]
		oldest = min(oldest, e.number)
		if int(e.number) > total {
			after[e.gen]++
			afterNanos += max(e.runtimeNanos, 0)
		}
	}
	if kept == recentNumbered && int(oldest) > total+1 {
		return // more GCs since the publication than kept: the next one
	}
	var b BeforeSession
	for g := range b.Generations {
		b.Generations[g] = max(s.gens[g]-(roll.ByGen[g].Count-after[g]), 0)
	}
	b.PauseRuntimeMS = max(s.pauseMS-ms(roll.All.RuntimeNanos-afterNanos), 0)
	if s.hasLocks && s.locks > float64(m.lock.starts) {
		b.LockContentions = uint64(s.locks) - m.lock.starts
	}
	// The meter reads each generation's count on its own: a GC between
	// two reads leaves one generation a GC high or low. The numbering is
	// the total's truth: a publication that does not add up to the GCs
	// numbered before the session is not taken, and two that agree end
	// the seeding.
	if n := m.numberedBefore(); m.num.first != 0 && b.Generations[0]+b.Generations[1]+b.Generations[2] != n {
		return
	}
	if o := m.seed.before; o != nil && o.Generations == b.Generations {
		m.seed.done = true
	}
	m.seed.pubs++
	m.seed.before = &b
}
