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
