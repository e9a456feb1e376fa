package monitor

import (
	"compress/gzip"
	"io"
	"testing"

	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/threadpool"
)

// TestThreadPoolSnapshot replays the starve fixture (16 pool items blocked
// 200 ms each in Task.Wait, the runtime's peak thread count 13) through a
// monitor with ThreadPool on: the snapshot has the pool's figures and
// OnStarvation fired once, for the burst's episode.
func TestThreadPoolSnapshot(t *testing.T) {
	r := tracetest.OpenFile(t, tracetest.Path(t, "threadpool.nettrace.gz"), func(in io.Reader) (*nettrace.Reader, error) {
		z, err := gzip.NewReader(in)
		if err != nil {
			return nil, err
		}
		return nettrace.NewReader(z)
	})
	var eps []threadpool.Episode
	var m *Monitor
	m = New(r.Header(), Options{ThreadPool: true, Locks: true, OnStarvation: func(e threadpool.Episode) {
		if s := m.Snapshot(); s.ThreadPool == nil || !s.ThreadPool.Starving {
			t.Errorf("snapshot from the callback: %+v", s.ThreadPool)
		}
		eps = append(eps, e)
	}})
	if err := tracetest.ReadAll(t, r, m.Event); err != nil {
		t.Fatal(err)
	}
	tp := m.Snapshot().ThreadPool
	if tp == nil {
		t.Fatal("no thread-pool summary")
	}
	var coop int
	for _, c := range tp.Injections {
		if c.Reason == "cooperative_blocking" {
			coop = c.Count
		}
	}
	if tp.ThreadsMax != 13 || tp.Threads != 13 || tp.Episodes != 1 || tp.Starving || coop != 13 || len(tp.Injections) != 9 ||
		tp.BlockedSec < 16*0.2 || len(eps) != 1 {
		t.Errorf("summary %+v, %d OnStarvation calls", tp, len(eps))
	}
	if st := m.Stats(); st.DecodeErrors != 0 {
		t.Errorf("decode errors: %v", st.FirstError)
	}
}
