package monitor

import (
	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/threadpool"
)

// ThreadPoolSummary is the thread pool's state (Options.ThreadPool): package
// threadpool's running figures.
type ThreadPoolSummary struct {
	// Threads is the pool's worker count now (-1: no event or counter
	// told it yet); ThreadsMax the most it had.
	Threads    int `json:"threads"`
	ThreadsMax int `json:"threads_max"`
	// Queue is the queue-length counter's latest value (-1: none yet).
	Queue float64 `json:"queue"`
	// Injections counts the pool's thread injections by reason
	// ("cooperative_blocking", "starvation", ...), every reason listed.
	Injections []ReasonCount `json:"injections"`
	// Episodes counts starvation episodes that lasted 100 ms; Starving is
	// true while one lasts, since StarvingSinceSec (seconds after the
	// session's first event).
	Episodes         int     `json:"episodes"`
	Starving         bool    `json:"starving"`
	StarvingSinceSec float64 `json:"starving_since_sec,omitempty"`
	// BlockedSec sums the finished blocking waits of pool threads (lock
	// contention; WaitHandle waits when the session asks for them).
	BlockedSec float64 `json:"blocked_sec"`
}

// ReasonCount is a count under a reason.
type ReasonCount struct {
	Reason string `json:"reason"`
	Count  int    `json:"count"`
}

func threadPoolSummary(t threadpool.Totals) *ThreadPoolSummary {
	s := &ThreadPoolSummary{Threads: t.Threads, ThreadsMax: t.ThreadsMax, Queue: t.Queue, Episodes: t.Episodes,
		Starving: t.Starving, BlockedSec: float64(t.BlockedNs) / 1e9}
	if t.Starving {
		s.StarvingSinceSec = float64(t.StarvingSinceNs) / 1e9
	}
	for i, n := range t.Injections {
		s.Injections = append(s.Injections, ReasonCount{Reason: clrevents.AdjustmentReason(i).String(), Count: n})
	}
	return s
}
