//go:build compat

package locks

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/nettrace"
)

// Tests on the compatibility suite: third-party traces, with expected
// values from CATALOG.md and the raw events.

// TestFiltraceContention checks the .NET 10 trace of CATALOG.md §8.4 (197
// ContentionStart v2 / 197 ContentionStop v1, one lock, four contending
// threads) against values computed here independently of the analyzer.
func TestFiltraceContention(t *testing.T) {
	var sumDur float64
	starts := map[uint64]int{}
	res, _ := run(t, tracetest.CompatPath(t, "filtrace__contention.nettrace"), func(ev *nettrace.Event) {
		switch {
		case clrevents.Is(ev.Meta, nettrace.Runtime, clrevents.IDContentionStop):
			s, _ := clrevents.DecodeContentionStop(ev.Payload, ev.Meta.Version, 8)
			sumDur += s.DurationNs
		case clrevents.Is(ev.Meta, nettrace.Runtime, clrevents.IDContentionStart):
			starts[ev.ThreadID]++
		}
	})
	s := res.Summary
	if s.Contentions != 197 || s.Unpaired != 0 || s.StopsWithoutStart != 0 || s.LostStarts != 0 || s.DecodeErrors != 0 {
		t.Fatalf("summary %+v", s)
	}
	// Each wait is rounded to a whole nanosecond.
	if math.Abs(float64(s.TotalNs)-sumDur) > float64(s.Contentions) {
		t.Errorf("total %d ns, ΣDurationNs %.0f", s.TotalNs, sumDur)
	}
	if s.MaxNs != 476_700 || !s.LockIDs || s.LockCreated != 1 {
		t.Errorf("max %d, lock ids %v, lock created %d", s.MaxNs, s.LockIDs, s.LockCreated)
	}
	if len(res.Locks) != 1 {
		t.Fatalf("%d locks", len(res.Locks))
	}
	l := res.Locks[0]
	if l.ID != 0x200806cf448 || l.Object != 0x20100c0ed00 || l.Contentions != 197 || l.TotalNs != s.TotalNs {
		t.Errorf("lock %+v", l)
	}
	var hist uint64
	for _, c := range l.Histogram.Counts {
		hist += c
	}
	if hist != 197 || l.Histogram.Counts[1] != 122 || l.Histogram.Counts[2] != 73 {
		t.Errorf("histogram %v", l.Histogram.Counts)
	}
	// The stream gives no type for the object (no BulkType, no allocation
	// events), so none is invented.
	if l.ObjectType != "" {
		t.Errorf("object type %q", l.ObjectType)
	}

	// .NET 10 reports owners as OS thread ids: every mapped owner is one of
	// the four contending threads, and the owner counts add up.
	if res.OwnerKind != "os-tid" {
		t.Errorf("owner kind %q", res.OwnerKind)
	}
	var owned int64
	for _, o := range l.Owners {
		owned += o.Contentions
		if o.Raw == 0 {
			if o.Mapped || o.Contentions != 53 {
				t.Errorf("unreported owner %+v", o)
			}
			continue
		}
		if !o.Mapped || o.Via != "os-tid" || starts[o.OSThreadID] == 0 || o.ManagedID == 0 {
			t.Errorf("owner %+v is not a contending thread", o)
		}
	}
	if owned != 197 || len(l.Owners) != 5 {
		t.Errorf("owners %+v", l.Owners)
	}

	// Per thread: the starts counted above, all paired.
	if len(res.Threads) != len(starts) || len(res.Threads) != 4 {
		t.Fatalf("threads %+v, starts %v", res.Threads, starts)
	}
	var tsum int64
	for _, th := range res.Threads {
		if th.Contentions != int64(starts[th.OSThreadID]) {
			t.Errorf("thread %d: %d waits, %d starts", th.OSThreadID, th.Contentions, starts[th.OSThreadID])
		}
		tsum += th.TotalNs
	}
	if tsum != s.TotalNs {
		t.Errorf("threads total %d, summary %d", tsum, s.TotalNs)
	}

	// The waiting stack names the workload's blocking site (CATALOG.md
	// §7.2: HoldLock and Monitor.Enter).
	if len(l.Stacks) != 1 || l.Stacks[0].Contentions != 197 {
		t.Fatalf("stacks %+v", l.Stacks)
	}
	fr := res.Stacks[l.Stacks[0].Stack].Frames
	want := []string{
		"System.Threading.Monitor.Enter_Slowpath(class System.Object)",
		"System.Threading.Monitor.Enter(class System.Object,bool&)",
		"TraceQ.Fixtures.HotLoopBench.ContentionLoop.HoldLock(int32)",
	}
	if len(fr) < 3 || !slices.Equal(fr[:3], want) {
		t.Errorf("top stack %q", fr)
	}
	if len(res.Samples) != 4 {
		t.Errorf("%d pprof samples, want one per thread", len(res.Samples))
	}
	if !slices.Equal(res.Notes, []string{"the runtime reported no owner (0) for 53 wait(s)"}) {
		t.Errorf("notes %q", res.Notes)
	}
}

// TestObjver4 is a .NET Core 3.0 trace: 8 ContentionStart v1 / 8
// ContentionStop v1 (DurationNs, no lock ids).
func TestObjver4(t *testing.T) {
	var sumDur float64
	res, _ := run(t, tracetest.CompatPath(t, "perfview__eventpipe-dotnetcore3.0-win-x64-objver4.nettrace"), func(ev *nettrace.Event) {
		if clrevents.Is(ev.Meta, nettrace.Runtime, clrevents.IDContentionStop) {
			s, _ := clrevents.DecodeContentionStop(ev.Payload, ev.Meta.Version, 8)
			sumDur += s.DurationNs
		}
	})
	s := res.Summary
	if s.Contentions != 8 || s.Unpaired != 0 || s.LockIDs || math.Abs(float64(s.TotalNs)-sumDur) > 8 {
		t.Fatalf("summary %+v (ΣDurationNs %.0f)", s, sumDur)
	}
	if len(res.Locks) != 1 || res.Locks[0].ID != 0 || len(res.Locks[0].Owners) != 0 {
		t.Errorf("locks %+v", res.Locks)
	}
	if len(res.Threads) != 6 || res.OwnerKind != "" {
		t.Errorf("threads %+v, owner kind %q", res.Threads, res.OwnerKind)
	}
	if len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "no lock ids") {
		t.Errorf("notes %q", res.Notes)
	}
}

// TestDiagnosticsStillWaiting: 9 ContentionStart v1 and no stop in a trace
// cut short: nine waits still open, none dropped, none counted as done.
func TestDiagnosticsStillWaiting(t *testing.T) {
	var last int64
	first := map[uint64]int64{}
	res, hdr := run(t, tracetest.CompatPath(t, "diagnostics__trace.nettrace"), func(ev *nettrace.Event) {
		last = max(last, ev.Timestamp)
		if clrevents.Is(ev.Meta, nettrace.Runtime, clrevents.IDContentionStart) {
			first[ev.ThreadID] = ev.Timestamp
		}
	})
	if res.Summary.Contentions != 0 || res.Summary.Unpaired != 9 || len(res.StillWaiting) != 9 || len(first) != 9 {
		t.Fatalf("summary %+v, still waiting %d", res.Summary, len(res.StillWaiting))
	}
	for _, w := range res.StillWaiting {
		if want := hdr.DurationNanos(last - first[w.Thread]); w.SoFarNs != want {
			t.Errorf("thread %d waited %d ns so far, want %d", w.Thread, w.SoFarNs, want)
		}
	}
	if len(res.Locks) != 1 || res.Locks[0].Waiting != 9 || res.Locks[0].Contentions != 0 {
		t.Errorf("locks %+v", res.Locks)
	}
	if !slices.Contains(res.Notes, "9 wait(s) still open when the stream ended") {
		t.Errorf("notes %q", res.Notes)
	}
}
