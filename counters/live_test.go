package counters_test

import (
	"errors"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clrspy/clrspy/counters"
	"github.com/clrspy/clrspy/internal/workload"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/source"
)

// liveCounters feeds a session's events to an Analyzer on a goroutine.
type liveCounters struct {
	t    *testing.T // for CheckValid on every result
	mu   sync.Mutex
	a    *counters.Analyzer
	s    *source.Stream
	done chan error
}

func startCounters(t *testing.T, pid int, meter bool) *liveCounters {
	t.Helper()
	opts := counters.Options{Meter: meter}
	provs := counters.Providers(&opts)
	s, err := source.Open(source.Spec{Pid: pid, Providers: provs})
	if err != nil {
		t.Fatal(err)
	}
	l := &liveCounters{t: t, a: counters.New(s.Header(), opts), s: s, done: make(chan error, 1)}
	go func() {
		for {
			ev, err := s.Next()
			if err != nil {
				if err == io.EOF || errors.Is(err, nettrace.ErrTruncated) {
					err = nil
				}
				l.done <- err
				return
			}
			l.mu.Lock()
			l.a.Event(ev)
			l.mu.Unlock()
		}
	}()
	t.Cleanup(func() { s.Close() })
	return l
}

func (l *liveCounters) result() *counters.Result {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.a.Result()
	if err := r.CheckValid(); err != nil {
		l.t.Error(err)
	}
	return r
}

// waitUpdates waits until metric name has been published n more times
// than now (each interval republishes it).
func (l *liveCounters) waitUpdates(t *testing.T, name string, n int) {
	t.Helper()
	var seen []int64
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if m, ok := l.result().Get(name); ok && (len(seen) == 0 || seen[len(seen)-1] != m.UpdatedNanos) {
			seen = append(seen, m.UpdatedNanos)
			if len(seen) > n {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s published %d times in 60 s, want %d", name, len(seen), n+1)
}

func vmRSS(t *testing.T, pid int) float64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb * 1024
		}
	}
	t.Fatal("no VmRSS")
	return 0
}

// TestRuntimeCountersLive attaches to the counters workload, lets it throw
// a known number of exceptions, keep timers, contend and allocate, then
// compares every counter with what the runtime says about itself while the
// workload holds still: once from the EventCounters (the default, every
// runtime) and once with the meter asked for too, whose values then come
// from it on .NET 9+ and still from the EventCounters on .NET 8
// (CLRSPY_WORKLOAD_TFM=net8.0). Either way the names are the semantic
// conventions'; the assertions follow each metric's FromStart.
func TestRuntimeCountersLive(t *testing.T) {
	t.Run("event_counters", func(t *testing.T) { testRuntimeCounters(t, false) })
	t.Run("meter", func(t *testing.T) { testRuntimeCounters(t, true) })
}

func testRuntimeCounters(t *testing.T, meter bool) {
	const exceptions, timers, allocMB = 25, 7, 64
	p := workload.Start(t, nil, "counters", "wait=1", "exceptions="+strconv.Itoa(exceptions),
		"timers="+strconv.Itoa(timers), "allocMB="+strconv.Itoa(allocMB))
	l := startCounters(t, p.Pid, meter)
	// The session is open: the runtime's counter baselines are taken now.
	l.waitUpdates(t, "cpu-usage", 1)
	p.Release()
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(p.Stderr(), "steady") {
		if time.Now().After(deadline) || p.Exited() {
			t.Fatalf("workload never steady:\n%s", p.Stderr())
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Two more publications: the second one polled after "steady" (the
	// interval timer runs apart from the workload, so under load it may
	// lag, never run ahead).
	l.waitUpdates(t, "dotnet.timer.count", 2)
	rss0 := vmRSS(t, p.Pid)
	r := l.result()
	rss1 := vmRSS(t, p.Pid)
	p.Release()
	wl, err := p.Wait(30 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	l.s.Stop()
	if err := <-l.done; err != nil {
		t.Fatal(err)
	}
	t.Logf("runtime %s: meter %v, event counters %v, %d metrics, errors %v", wl.Runtime, r.Meter, r.EventCounters, len(r.Metrics), r.Errors)
	for _, m := range r.Metrics {
		t.Logf("  %-50s %-40v %-14s %16.3f %-12s from_start=%v rate=%.3f %s/%s", m.Name, m.Attributes, m.Kind, m.Value, m.Unit, m.FromStart, m.Rate, m.Source, m.RuntimeName)
	}
	if !r.EventCounters {
		t.Error("no EventCounters values")
	}
	major, _ := strconv.Atoi(strings.SplitN(strings.TrimPrefix(wl.Runtime, ".NET "), ".", 2)[0])
	fromMeter := meter && major >= 9
	if r.Meter != fromMeter {
		t.Errorf("%s: meter values %v, want %v", wl.Runtime, r.Meter, fromMeter)
	}
	wantSource := counters.SourceEventCounters
	if fromMeter {
		wantSource = counters.SourceMeter
	}
	work := func(k string) float64 { return wl.Float(k) }
	get := func(name string, attrs ...string) counters.Metric {
		t.Helper()
		m, ok := r.Get(name, attrs...)
		if !ok {
			t.Fatalf("no %s %v", name, attrs)
		}
		if m.Source != wantSource || !m.SemConv {
			t.Errorf("%s: source %s semconv %v, want %s", name, m.Source, m.SemConv, wantSource)
		}
		return m
	}
	// within checks a total against the runtime's own figure before and
	// after the counter was read: from the process start, or (since the
	// session) against the change since the workload began.
	within := func(name string, m counters.Metric, lo, hi float64) {
		t.Helper()
		// (The runtime's milliseconds and the meter's seconds differ in
		// their last bits.)
		if m.Value < lo-1e-9*(1+lo) || m.Value > hi+1e-9*(1+hi) {
			t.Errorf("%s = %v, runtime says between %v and %v", name, m.Value, lo, hi)
		}
	}

	// Exceptions: every exception was thrown after the session began, so
	// from the session's start (both sources count from there) the total
	// is exact.
	var exc float64
	for _, m := range r.Metrics {
		if m.Name == "dotnet.exceptions" {
			exc += m.Value
			if m.FromStart || m.Kind != counters.KindCounter || m.Unit != "{exception}" {
				t.Errorf("dotnet.exceptions %+v", m)
			}
		}
	}
	if exc != exceptions || work("exceptionsThrown") != exceptions {
		t.Errorf("dotnet.exceptions total %v, the workload threw %v", exc, work("exceptionsThrown"))
	}
	if fromMeter {
		if m := get("dotnet.exceptions", "error.type=InvalidOperationException"); m.Value != exceptions {
			t.Errorf("InvalidOperationException count %v", m.Value)
		}
	}
	// Still values: exact at the moment the workload held still.
	if m := get("dotnet.timer.count"); m.Value != work("timersAfter") || work("timersAfter") < timers || m.Kind != counters.KindUpDownCounter {
		t.Errorf("dotnet.timer.count %v (%s), runtime says %v", m.Value, m.Kind, work("timersAfter"))
	}
	if m := get("dotnet.assembly.count"); m.Value != work("assembliesAfter") {
		t.Errorf("dotnet.assembly.count %v, AppDomain.GetAssemblies().Length %v (before steady %v)", m.Value, work("assembliesAfter"), work("assembliesBefore"))
	}
	if m := get("dotnet.thread_pool.thread.count"); m.Value != work("threadPoolThreadsAfter") || m.Kind != counters.KindUpDownCounter {
		t.Errorf("dotnet.thread_pool.thread.count %v (%s), ThreadPool.ThreadCount %v", m.Value, m.Kind, work("threadPoolThreadsAfter"))
	}
	if m := get("dotnet.thread_pool.queue.length"); m.Value != work("threadPoolQueueAfter") {
		t.Errorf("dotnet.thread_pool.queue.length %v, ThreadPool.PendingWorkItemCount %v", m.Value, work("threadPoolQueueAfter"))
	}
	// Working set: Environment.WorkingSet is the resident set; the counter
	// was polled up to one interval before VmRSS was read around it. The
	// workload holds still, so 5 % covers page-level drift (and the 1 MB
	// rounding of the EventCounter, in MB).
	ws := get("dotnet.process.memory.working_set")
	lo, hi := min(rss0, rss1)*0.95-1e6, max(rss0, rss1)*1.05+1e6
	if ws.Value < lo || ws.Value > hi || ws.Unit != "By" {
		t.Errorf("working set %v %s, VmRSS %v..%v", ws.Value, ws.Unit, rss0, rss1)
	}
	// Totals.
	if m := get("dotnet.jit.compiled_methods"); !m.FromStart {
		t.Errorf("compiled methods not from start: %+v", m)
	} else {
		within("dotnet.jit.compiled_methods", m, work("jitMethodsBefore"), work("jitMethodsAfter"))
	}
	if m := get("dotnet.jit.compiled_il.size"); m.FromStart {
		within("dotnet.jit.compiled_il.size", m, work("jitILBytesBefore"), work("jitILBytesAfter"))
	}
	alloc := get("dotnet.gc.heap.total_allocated")
	if alloc.FromStart {
		within("dotnet.gc.heap.total_allocated", alloc, work("allocatedBefore"), work("allocatedAfter"))
	} else {
		within("dotnet.gc.heap.total_allocated (since the session)", alloc, allocMB<<20, work("allocatedAfter"))
	}
	lc := get("dotnet.monitor.lock_contentions")
	if lc.FromStart {
		within("dotnet.monitor.lock_contentions", lc, work("lockContentionsBefore"), work("lockContentionsAfter"))
	} else {
		within("dotnet.monitor.lock_contentions (since the session)", lc, work("contentions"), work("lockContentionsAfter"))
	}
	if work("contentions") < 1 {
		t.Errorf("the workload's threads never contended")
	}
	pause := get("dotnet.gc.pause.time")
	if pause.FromStart {
		within("dotnet.gc.pause.time", pause, work("pauseMsBefore")/1e3, work("pauseMsAfter")/1e3)
	} else {
		within("dotnet.gc.pause.time (since the session)", pause, 0, work("pauseMsAfter")/1e3)
	}
	// GC counts: exclusive per generation, as the convention says.
	for g, gen := range []string{"gen0", "gen1", "gen2"} {
		m := get("dotnet.gc.collections", counters.AttrGeneration+"="+gen)
		excl := func(sfx string) float64 {
			v := work("gen" + strconv.Itoa(g) + sfx)
			if g < 2 {
				v -= work("gen" + strconv.Itoa(g+1) + sfx)
			}
			return v
		}
		if m.FromStart {
			within("dotnet.gc.collections "+gen, m, excl("Before"), excl("After"))
		} else {
			within("dotnet.gc.collections "+gen+" (since the session)", m, 0, excl("After"))
		}
	}
	if m := get("dotnet.gc.collections", counters.AttrGeneration+"=gen0"); m.Value < 1 {
		t.Errorf("no gen0 GC counted after allocating %d MB", allocMB)
	}
	if fromMeter {
		if m := get("dotnet.process.cpu.count"); m.Value != work("processorCountAfter") {
			t.Errorf("dotnet.process.cpu.count %v, Environment.ProcessorCount %v", m.Value, work("processorCountAfter"))
		}
	}
	// Counters the conventions do not name keep the runtime's name.
	if m, ok := r.Get("cpu-usage"); !ok || m.SemConv || m.Unit != "%" || m.Source != counters.SourceEventCounters {
		t.Errorf("cpu-usage: %+v %v", m, ok)
	}
	if len(r.Errors) != 0 {
		t.Errorf("runtime errors: %v", r.Errors)
	}
}
