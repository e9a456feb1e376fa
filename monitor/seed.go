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
	attempts int
	before   *BeforeSession
}

// maxSeedAttempts bounds the meter publications looked at for the
// runtime's totals (a meter session that never publishes them, as another
// meter's only, stops being asked).
const maxSeedAttempts = 64

// trySeed takes the runtime's totals from the meter's first publication
// of them (m.mu held; called after a counter event while not done).
func (m *Monitor) trySeed() {
	m.seed.attempts++
	if m.seed.attempts > maxSeedAttempts {
		m.seed.done = true
		return
	}
	r := m.ctr.Result()
	var b BeforeSession
	for g := range b.Generations {
		c, ok := r.Get("dotnet.gc.collections", counters.AttrGeneration+"=gen"+strconv.Itoa(g))
		if !ok || c.Source != counters.SourceMeter || !c.FromStart {
			return
		}
		// A GC counts in the runtime's figure from its start: the ones
		// in flight are the session's already.
		b.Generations[g] = max(int(c.Value)-max(m.started[g], m.gen[g].count), 0)
	}
	p, ok := r.Get("dotnet.gc.pause.time")
	if !ok || p.Source != counters.SourceMeter || !p.FromStart {
		return
	}
	b.PauseRuntimeMS = max(p.Value*1e3-ms(m.all.totalRuntime), 0)
	if c, ok := r.Get("dotnet.monitor.lock_contentions"); ok && c.Source == counters.SourceMeter && c.FromStart && c.Value > float64(m.lock.contentions) {
		b.LockContentions = uint64(c.Value) - m.lock.contentions
	}
	m.seed.done, m.seed.before = true, &b
}
