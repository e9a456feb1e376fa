package metrics

import (
	"testing"

	"github.com/clrspy/clrspy/internal/monitor"
)

// TestThreadPoolFamilies: a target whose monitor follows the thread pool
// exports its episodes, injections by reason and blocked time.
func TestThreadPoolFamilies(t *testing.T) {
	tp := &monitor.ThreadPoolSummary{Threads: 13, ThreadsMax: 13, Queue: 0, Episodes: 1, BlockedSec: 6.5,
		Injections: []monitor.ReasonCount{{Reason: "starvation", Count: 2}, {Reason: "cooperative_blocking", Count: 13}}}
	src := &fakeSource{ts: []Target{{Pid: "7", Process: "Starve", Up: true, Snapshot: &monitor.Snapshot{ThreadPool: tp}}}}
	reg, err := newRegistry(src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	compare(t, reg, exposition(famTPEpisodes, "counter", `clrspy_thread_pool_starvation_episodes_total{pid="7",process="Starve"} 1`)+
		exposition(famTPInjections, "counter",
			`clrspy_thread_pool_injections_total{pid="7",process="Starve",reason="cooperative_blocking"} 13`,
			`clrspy_thread_pool_injections_total{pid="7",process="Starve",reason="starvation"} 2`)+
		exposition(famTPBlocked, "counter", `clrspy_thread_pool_blocked_seconds_total{pid="7",process="Starve"} 6.5`),
		famTPEpisodes.Name, famTPInjections.Name, famTPBlocked.Name)
}
