package threadpool

import (
	"compress/gzip"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/stacks"
)

// runFixture analyzes testdata/traces/threadpool.nettrace.gz with stacks
// named, as clrspy threadpool does.
func runFixture(t *testing.T) (*Result, *nettrace.Header) {
	t.Helper()
	r := tracetest.OpenFile(t, tracetest.Path(t, "threadpool.nettrace.gz"), func(in io.Reader) (*nettrace.Reader, error) {
		z, err := gzip.NewReader(in)
		if err != nil {
			return nil, err
		}
		return nettrace.NewReader(z)
	})
	sym := stacks.NewSymbols(r.Header())
	a := New(r.Header(), Options{Symbols: sym})
	var first int64
	if err := tracetest.ReadAll(t, r, func(ev *nettrace.Event) {
		if first == 0 {
			first = ev.Timestamp
		}
		sym.Event(ev)
		a.Event(ev)
	}); err != nil {
		t.Fatal(err)
	}
	if st := a.Stats(); st.DecodeErrors != 0 {
		t.Fatalf("%d decode errors: %v", st.DecodeErrors, st.FirstError)
	}
	h := *r.Header()
	h.SyncTimeQPC, h.SyncTimeUTC = first, h.Time(first) // times relative to the first event
	res := a.Result()
	if err := res.CheckValid(); err != nil {
		t.Error(err)
	}
	return res, &h
}

// TestStarveFixture checks the .NET 10 starve recording (16 pool items
// each blocked 200 ms in Task.Delay(200).Wait(), a probe every 20 ms)
// against the workload's own record: the peak ThreadPool.ThreadCount its
// probe saw, the burst window, the blocking method.
func TestStarveFixture(t *testing.T) {
	w := tracetest.Workload(t, "threadpool.nettrace")
	var startS, endS string
	if err := errors.Join(w.Get("burstStartUtc", &startS), w.Get("burstEndUtc", &endS)); err != nil {
		t.Fatal(err)
	}
	bStart, err1 := time.Parse(time.RFC3339Nano, startS)
	bEnd, err2 := time.Parse(time.RFC3339Nano, endS)
	if err := errors.Join(err1, err2); err != nil {
		t.Fatal(err)
	}
	res, h := runFixture(t)
	s := res.Summary
	// The probe saw 13 threads at its peak; the events saw 13 starts.
	if s.ThreadsMax != int(w.Int("peakThreads")) || s.WorkerStarts != 13 || s.MinWorkers != 2 || s.MaxWorkers != 32767 {
		t.Errorf("summary %+v; the runtime's peak thread count %d", s, w.Int("peakThreads"))
	}
	// Every injection of this recording is cooperative blocking (the pool
	// compensating for threads blocked in Task.Wait), none "starvation".
	if s.Injections != 13 || res.InjectionsByReason["cooperative_blocking"] != 13 || s.Adjustments != 19 {
		t.Errorf("%d adjustments, %d injections %v", s.Adjustments, s.Injections, res.InjectionsByReason)
	}
	// One episode, inside the burst: from the first injection after the
	// burst began until a worker parked once the blocked items were done
	// (the clocks are the same machine's; 20 ms covers the trace's clock
	// sync).
	if len(res.Episodes) != 1 || s.BriefEpisodes != 1 {
		t.Fatalf("episodes %+v, %d brief", res.Episodes, s.BriefEpisodes)
	}
	e := res.Episodes[0]
	start, end := h.SyncTimeUTC.Add(time.Duration(e.StartNs)), h.SyncTimeUTC.Add(time.Duration(e.EndNs))
	const slack = 20 * time.Millisecond
	if start.Before(bStart.Add(-slack)) || end.After(bEnd.Add(slack)) || !e.Ended || e.Injections != 11 ||
		e.ThreadsBefore != 4 || e.ThreadsAfter != 13 {
		t.Errorf("episode %+v (%s .. %s), burst %s .. %s", e, start.Format("15:04:05.000"), end.Format("15:04:05.000"),
			bStart.Format("15:04:05.000"), bEnd.Format("15:04:05.000"))
	}
	// The blocking: 16 burst items and 2 warm-up ones, each at least its
	// 200 ms (1 ms for the warm-up), all in Workload.Starve.Block.
	if s.Source != "wait-handle" || len(res.Sites) != 1 {
		t.Fatalf("source %q, sites %+v", s.Source, res.Sites)
	}
	st := res.Sites[0]
	if st.Site != "Workload.Starve.Block" || st.Calls != "System.Threading.Tasks.Task.Wait" || !st.SyncOverAsync ||
		st.Waits != 18 || st.BlockedNs < 16*200e6 {
		t.Errorf("site %+v", st)
	}
	if fs := res.Stacks[st.Stack].Frames; len(fs) < 8 || fs[0] != "System.Threading.Monitor.Wait(class System.Object,int32)" {
		t.Errorf("stack %q", fs)
	}
	if len(res.Blocked) == 0 || res.Blocked[0].BlockedNs > st.BlockedNs {
		t.Errorf("blocked stacks %+v", res.Blocked)
	}
	if len(res.Timeline) < 2 || res.Timeline[1].Threads != 13 {
		t.Errorf("timeline %+v", res.Timeline)
	}
}

// TestNoPoolEvents: a stream without thread-pool events says so and finds
// nothing, without failing.
func TestNoPoolEvents(t *testing.T) {
	r := tracetest.Open(t, "gc-wks.nettrace", nettrace.NewReader)
	a := New(r.Header(), Options{})
	if err := tracetest.ReadAll(t, r, a.Event); err != nil {
		t.Fatal(err)
	}
	res := a.Result()
	if len(res.Episodes) != 0 || len(res.Sites) != 0 || res.Summary.Source != "" || len(res.Notes) < 2 {
		t.Errorf("result %+v", res)
	}
}

// TestShortPayloads: truncated thread-pool payloads are decode errors,
// never a panic, and change nothing.
func TestShortPayloads(t *testing.T) {
	h := &nettrace.Header{PointerSize: 8, QPCFrequency: 1e9}
	a := New(h, Options{})
	for _, id := range []uint32{50, 51, 54, 55, 56, 57, 59, 301, 302, 81, 91} {
		m := &nettrace.Metadata{Provider: nettrace.ProviderRuntime, Runtime: nettrace.Runtime, EventID: id, Version: 1}
		if id >= 50 && id <= 59 || id >= 301 {
			m.Version = 0
		}
		a.Event(&nettrace.Event{Meta: m, Timestamp: 1, Payload: []byte{1}})
	}
	st := a.Stats()
	if st.DecodeErrors != 11 || a.Result().Summary.Injections != 0 {
		t.Errorf("stats %+v", st)
	}
	if _, err := clrevents.DecodeThreadPoolAdjustment(make([]byte, 18), 0, 8); err != nil {
		t.Errorf("an 18-byte adjustment: %v", err)
	}
}

// TestTotalsAndOnEpisode: the running figures a live view takes agree with
// the Result, and OnEpisode fires once for the episode that lasted.
func TestTotalsAndOnEpisode(t *testing.T) {
	r := tracetest.OpenFile(t, tracetest.Path(t, "threadpool.nettrace.gz"), func(in io.Reader) (*nettrace.Reader, error) {
		z, err := gzip.NewReader(in)
		if err != nil {
			return nil, err
		}
		return nettrace.NewReader(z)
	})
	var eps []Episode
	a := New(r.Header(), Options{OnEpisode: func(e Episode) { eps = append(eps, e) }})
	if err := tracetest.ReadAll(t, r, a.Event); err != nil {
		t.Fatal(err)
	}
	tot, res := a.Totals(), a.Result()
	if len(eps) != 1 || eps[0].StartNs != res.Episodes[0].StartNs || tot.Episodes != 1 || tot.Starving {
		t.Errorf("OnEpisode %+v, totals %+v", eps, tot)
	}
	if tot.ThreadsMax != 13 || tot.Threads != 13 || tot.Injections[clrevents.AdjustCooperativeBlocking] != 13 {
		t.Errorf("totals %+v", tot)
	}
	// Without stacks named every wait of a pool worker counts: here the
	// same waits as the named sites' (the 18 blocked items).
	named, _ := runFixture(t)
	if tot.BlockedNs != named.Summary.BlockedNs {
		t.Errorf("blocked %d ns, the named sites %d ns", tot.BlockedNs, named.Summary.BlockedNs)
	}
}

// TestEventNoAlloc: in steady state (threads, stacks and timeline second
// already seen) the analysis allocates nothing per event.
func TestEventNoAlloc(t *testing.T) {
	h := &nettrace.Header{PointerSize: 8, QPCFrequency: 1e9}
	a := New(h, Options{})
	rt := func(id uint32) *nettrace.Metadata {
		return &nettrace.Metadata{Provider: nettrace.ProviderRuntime, Runtime: nettrace.Runtime, EventID: id}
	}
	worker := make([]byte, 10)
	worker[0] = 4
	adj := make([]byte, 18)
	adj[8], adj[12] = 4, byte(clrevents.AdjustClimbingMove)
	stack := []uint64{0x1000, 0x2000, 0x3000}
	evs := []*nettrace.Event{
		{Meta: rt(clrevents.IDThreadPoolWorkerThreadStart), ThreadID: 7, Payload: worker},
		{Meta: rt(clrevents.IDWaitHandleWaitStart), ThreadID: 7, Payload: make([]byte, 11), Stack: stack},
		{Meta: rt(clrevents.IDWaitHandleWaitStop), ThreadID: 7, Payload: make([]byte, 2)},
		{Meta: rt(clrevents.IDThreadPoolAdjustmentAdjustment), ThreadID: 8, Payload: adj},
		{Meta: rt(clrevents.IDThreadPoolAdjustmentSample), ThreadID: 8, Payload: make([]byte, 10)},
		{Meta: &nettrace.Metadata{Provider: nettrace.ProviderSampleProfiler, Runtime: nettrace.SampleProfiler}, ThreadID: 7, Payload: make([]byte, 4), Stack: stack},
	}
	ts := int64(1)
	feed := func() {
		for _, ev := range evs {
			ts += 1000
			ev.Timestamp = ts
			a.Event(ev)
		}
	}
	feed()
	if n := testing.AllocsPerRun(1000, feed); n != 0 {
		t.Errorf("%v allocations per round of %d events", n, len(evs))
	}
	if st := a.Stats(); st.DecodeErrors != 0 {
		t.Fatalf("decode errors: %v", st.FirstError)
	}
}
