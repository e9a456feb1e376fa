package locks

import (
	"errors"
	"slices"
	"testing"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/nettrace"
)

// TestContentionFixture checks the .NET 10 contention fixture (four
// threads taking one Monitor five times each, holding it 10 ms) against
// the workload's own record: each thread's OS id, how many of its
// acquisitions had to wait, and the time it measured waiting.
func TestContentionFixture(t *testing.T) {
	w := tracetest.Workload(t, "contention.nettrace")
	var tids []uint64
	var contended []int64
	var waitMs []float64
	if err := errors.Join(w.Get("tids", &tids), w.Get("contended", &contended), w.Get("waitMs", &waitMs)); err != nil {
		t.Fatal(err)
	}
	var created uint64
	res, _ := run(t, tracetest.Path(t, "contention.nettrace"), func(ev *nettrace.Event) {
		if clrevents.Is(ev.Meta, nettrace.Runtime, clrevents.IDContentionLockCreated) {
			c, _ := clrevents.DecodeContentionLockCreated(ev.Payload, ev.Meta.Version, 8)
			created = c.LockID
		}
	})
	s := res.Summary
	var want int64
	for _, c := range contended {
		want += c
	}
	if s.Contentions != want || s.Unpaired != 0 || s.StopsWithoutStart != 0 || s.LostStarts != 0 || s.DecodeErrors != 0 || !s.LockIDs || s.LockCreated != 1 {
		t.Fatalf("summary %+v; the workload waited %d times", s, want)
	}
	if len(res.Locks) != 1 || res.Locks[0].ID != created || res.Locks[0].Contentions != want || res.OwnerKind != "os-tid" {
		t.Fatalf("locks %+v (created %#x), owner kind %q", res.Locks, created, res.OwnerKind)
	}
	l := res.Locks[0]
	// .NET 10 reports owners as OS thread ids: each one the runtime named
	// is one of the workload's threads.
	var owned int64
	for _, o := range l.Owners {
		owned += o.Contentions
		if o.Raw != 0 && (!o.Mapped || o.Via != "os-tid" || !slices.Contains(tids, o.OSThreadID)) {
			t.Errorf("owner %+v is not a workload thread %v", o, tids)
		}
	}
	if owned != want {
		t.Errorf("owners account for %d waits, want %d", owned, want)
	}
	if len(res.Threads) != len(tids) {
		t.Fatalf("threads %+v, workload threads %v", res.Threads, tids)
	}
	for _, th := range res.Threads {
		i := slices.Index(tids, th.OSThreadID)
		if i < 0 {
			t.Errorf("thread %d is not a workload thread", th.OSThreadID)
			continue
		}
		// The workload's stopwatch also times the failed TryEnter and its
		// own wake-up after the runtime's stop event: up to 1 ms more.
		if d := waitMs[i] - float64(th.TotalNs)/1e6; th.Contentions != contended[i] || d < 0 || d > 1 {
			t.Errorf("thread %d: %d waits, %.3f ms; the workload had %d waits, %.3f ms", th.OSThreadID, th.Contentions, float64(th.TotalNs)/1e6, contended[i], waitMs[i])
		}
	}
	// Each wait lasts most of one 10 ms hold or several: the histogram's
	// 10-100 ms bucket holds them all.
	var hist uint64
	for _, c := range l.Histogram.Counts {
		hist += c
	}
	if hist != uint64(want) || l.Histogram.Counts[4] != uint64(want) {
		t.Errorf("histogram %v", l.Histogram.Counts)
	}
	if len(l.Stacks) != 1 {
		t.Fatalf("stacks %+v", l.Stacks)
	}
	fr := res.Stacks[l.Stacks[0].Stack].Frames
	if len(fr) != 3 || fr[0] != "System.Threading.Monitor.Enter_Slowpath(class System.Object)" ||
		fr[1] != "Workload.Contention+<>c__DisplayClass3_1.<Run>b__0()" {
		t.Errorf("waiting stack %q", fr)
	}
}
