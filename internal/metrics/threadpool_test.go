package metrics

import (
	"strings"
	"testing"

	"github.com/clrspy/clrspy/internal/monitor"
)

// TestThreadPoolFamilies: a target whose monitor follows the thread pool
// exports its episodes, injections by reason and blocked time.
func TestThreadPoolFamilies(t *testing.T) {
	tp := &monitor.ThreadPoolSummary{Threads: 13, ThreadsMax: 13, Queue: 0, Episodes: 1, BlockedSec: 6.5,
		Injections: []monitor.ReasonCount{{Reason: "starvation", Count: 2}, {Reason: "cooperative_blocking", Count: 13}}}
	src := &fakeSource{targets: []Target{{Pid: "7", Process: "Starve", Up: true, Snapshot: &monitor.Snapshot{ThreadPool: tp}}}}
	reg, err := NewRegistry(src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	text := string(scrape(t, Handler(reg), ""))
	for _, want := range []string{
		`clrspy_thread_pool_starvation_episodes_total{pid="7",process="Starve"} 1`,
		`clrspy_thread_pool_injections_total{pid="7",process="Starve",reason="cooperative_blocking"} 13`,
		`clrspy_thread_pool_injections_total{pid="7",process="Starve",reason="starvation"} 2`,
		`clrspy_thread_pool_blocked_seconds_total{pid="7",process="Starve"} 6.5`,
		"# TYPE clrspy_thread_pool_blocked_seconds_total counter",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in\n%s", want, text)
		}
	}
}
