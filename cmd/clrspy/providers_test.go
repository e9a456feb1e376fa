package main

import (
	"reflect"
	"testing"
	"time"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/capture"
	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/counters"
	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/internal/monitor"
	"github.com/clrspy/clrspy/internal/web"
	"github.com/clrspy/clrspy/ipc"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/perf"
	"github.com/clrspy/clrspy/stacks"
)

// The sessions' providers derived from the analyses' events
// (clrevents.ProvidersFor) against the lists the commands, ipc's named
// profiles, the heap snapshot and the live monitor wrote by hand before
// (written out here as they were). They are equal but for the level of
// record --profile contention and the keywords the monitor gained with
// Locks alone or ThreadPool alone, each explained where it is checked.
func TestDerivedProvidersEqualHandWritten(t *testing.T) {
	runtime := func(kw uint64, level uint8) ipc.Provider {
		return ipc.Provider{Name: nettrace.ProviderRuntime, Keywords: kw, Level: level}
	}
	sampler := ipc.Provider{Name: nettrace.ProviderSampleProfiler, Keywords: ipc.SampleProfilerKeywords, Level: ipc.LevelInformational}
	ctrs := counters.Providers(&counters.Options{Interval: time.Second})
	// What ipc.KeywordLocks and ipc.HeapSnapshotKeywords were.
	const locksKW = ipc.KeywordContention | ipc.KeywordAppDomainResourceManagement | ipc.KeywordThreading | ipc.KeywordSymbols
	const snapshotKW = ipc.KeywordGC | ipc.KeywordType | ipc.KeywordGCHeapDump | ipc.KeywordGCHeapCollect | ipc.KeywordGCHeapAndTypeNames
	profile := func(name string) []ipc.Provider {
		ps, err := (&sessionFlags{profiles: []string{name}}).resolve()
		if err != nil {
			t.Fatal(err)
		}
		return ps
	}
	for _, tc := range []struct {
		name    string
		derived []ipc.Provider
		before  []ipc.Provider
	}{
		{"gc", gcSetProviders(false), []ipc.Provider{runtime(ipc.KeywordGC, ipc.LevelInformational)}},
		{"gc --sample", gcSetProviders(true), []ipc.Provider{runtime(ipc.KeywordGC, ipc.LevelInformational), sampler}},
		{"exceptions", providersOf(exceptionsSet()),
			[]ipc.Provider{runtime(ipc.KeywordException|ipc.KeywordSymbols, ipc.LevelInformational)}},
		{"locks", capture.NewLocks(false).Set().Providers(), []ipc.Provider{runtime(locksKW, ipc.LevelInformational)}},
		{"locks --object-types", capture.NewLocks(true).Set().Providers(), []ipc.Provider{runtime(locksKW|ipc.KeywordType|
			ipc.KeywordGCSampledObjectAllocationHigh|ipc.KeywordGCHeapAndTypeNames, ipc.LevelInformational)}},
		{"threadpool", providersOf(threadPoolSet(false)), append([]ipc.Provider{runtime(ipc.KeywordThreading|ipc.KeywordWaitHandle|
			ipc.KeywordContention|ipc.KeywordSymbols, ipc.LevelVerbose)}, ctrs...)},
		{"threadpool --samples", providersOf(threadPoolSet(true)), append(append([]ipc.Provider{runtime(ipc.KeywordThreading|ipc.KeywordWaitHandle|
			ipc.KeywordContention|ipc.KeywordSymbols, ipc.LevelVerbose)}, ctrs...), sampler)},
		{"heap", providersOf(heapSet(0, false)), []ipc.Provider{runtime(ipc.KeywordGC|ipc.KeywordType|ipc.KeywordGCSurvivalAndMovement|
			ipc.KeywordAllocationSampling|ipc.KeywordSymbols, ipc.LevelVerbose)}},
		// The sampler's sessions ask for the method events at Verbose, the
		// only level the runtime writes named method loads to
		// (stacks.SamplerProviders): before, informational.
		{"profile (eventpipe sampler)", specProviders(capture.ProfileSpec), []ipc.Provider{sampler, runtime(ipc.KeywordSymbols, ipc.LevelVerbose)}},
		{"profile (perf sampler's session)", perf.SessionProviders, []ipc.Provider{runtime(ipc.KeywordGC|ipc.KeywordSymbols, ipc.LevelInformational)}},
		{"record --profile threadpool", profile("threadpool"), []ipc.Provider{
			runtime(ipc.KeywordThreading|ipc.KeywordWaitHandle|ipc.KeywordContention|ipc.KeywordSymbols, ipc.LevelVerbose),
			{Name: "System.Runtime", Level: ipc.LevelInformational, Args: "EventCounterIntervalSec=1"},
		}},
		// The profiles ipc wrote by hand before (ipc/profiles.go).
		{"record --profile gc", profile("gc"), []ipc.Provider{runtime(ipc.KeywordGC, ipc.LevelInformational)}},
		{"record --profile gc-verbose", profile("gc-verbose"), []ipc.Provider{runtime(ipc.KeywordGC, ipc.LevelVerbose)}},
		// The rundown session that names code compiled before attaching
		// (source.Stream.Rundown: top --cpu, serve, the live page).
		{"rundown session", stacks.SymbolProviders(), []ipc.Provider{runtime(ipc.KeywordSymbols, ipc.LevelInformational)}},
		{"record --profile cpu", profile("cpu"), []ipc.Provider{sampler, runtime(ipc.KeywordSymbols, ipc.LevelVerbose)}},
		{"record --profile alloc", profile("alloc"), []ipc.Provider{runtime(ipc.KeywordGC|ipc.KeywordType|ipc.KeywordAllocationSampling|ipc.KeywordSymbols, ipc.LevelVerbose)}},
		{"record --profile movement", profile("movement"), []ipc.Provider{runtime(ipc.KeywordGC|ipc.KeywordGCSurvivalAndMovement, ipc.LevelInformational)}},
		{"record --profile gcdump", profile("gcdump"), []ipc.Provider{runtime(snapshotKW, ipc.LevelVerbose)}},
		// all: before, with AppDomainResourceManagement too (in
		// KeywordLocks). As for the report page below: the thread events
		// that name lock owners come with Threading, on here for the pool;
		// the keyword's other events are read by nothing.
		{"record --profile all", profile("all"), []ipc.Provider{runtime((ipc.KeywordGC|ipc.KeywordType|ipc.KeywordAllocationSampling|
			locksKW|ipc.KeywordWaitHandle)&^ipc.KeywordAppDomainResourceManagement, ipc.LevelVerbose), sampler}},
		// The heap snapshot's session (clrspy snapshot, serve's
		// /debug/pprof/heap): the dump's events derived, GCHeapCollect and
		// GCHeapAndTypeNames (no event's keywords) and the level by hand.
		{"snapshot", capture.SnapshotProviders(), []ipc.Provider{runtime(snapshotKW, ipc.LevelVerbose)}},
		// triage gained Kestrel's request events (gc.requests_hit_pct).
		{"triage", triageSetProviders(), append([]ipc.Provider{runtime(ipc.KeywordGC|locksKW, ipc.LevelInformational),
			ipc.Provider{Name: clrevents.ProviderKestrel, Level: ipc.LevelInformational}}, ctrs...)},
		// The live monitor's sets (clrspy top, serve, the live page) where
		// they did not change; the changed ones are below.
		{"monitor", monitor.Providers(&monitor.Options{NoCounters: true}), []ipc.Provider{runtime(ipc.KeywordGC, ipc.LevelInformational)}},
		{"monitor (top --cpu)", monitor.Providers(&monitor.Options{NoCounters: true, CPU: true}),
			[]ipc.Provider{runtime(ipc.KeywordGC|ipc.KeywordSymbols, ipc.LevelVerbose), sampler}},
		{"monitor (top --exceptions)", monitor.Providers(&monitor.Options{NoCounters: true, Exceptions: true}),
			[]ipc.Provider{runtime(ipc.KeywordGC|ipc.KeywordException|ipc.KeywordSymbols, ipc.LevelInformational)}},
		{"monitor (serve: locks, thread pool, exceptions)", monitor.Providers(&monitor.Options{NoCounters: true, Locks: true, ThreadPool: true, Exceptions: true}),
			[]ipc.Provider{runtime(ipc.KeywordGC|ipc.KeywordContention|ipc.KeywordThreading|ipc.KeywordException|ipc.KeywordSymbols, ipc.LevelInformational)}},
		{"monitor (serve: requests)", monitor.Providers(&monitor.Options{NoCounters: true, Requests: true}),
			[]ipc.Provider{runtime(ipc.KeywordGC, ipc.LevelInformational), ipc.Provider{Name: clrevents.ProviderKestrel, Level: ipc.LevelInformational}}},
		{"monitor (counters)", monitor.Providers(&monitor.Options{Counters: counters.Options{Interval: time.Second}}),
			append([]ipc.Provider{runtime(ipc.KeywordGC, ipc.LevelInformational)}, ctrs...)},
	} {
		if !reflect.DeepEqual(tc.derived, tc.before) {
			t.Errorf("%s: derived %+v; before %+v", tc.name, tc.derived, tc.before)
		}
	}

	// The report page (clrspy report, the live page): before, the same set
	// with AppDomainResourceManagement too. The page reads its
	// ThreadCreated events (lock owners), which either of their keywords
	// enables, and Threading (the pool's events) is on: measured on the
	// contention workload, a session with Contention|Threading and one
	// with Contention|AppDomainResourceManagement both got the same 8
	// ThreadCreated events. The keyword's other events (AppDomain memory
	// allocated and survived) are read by nothing.
	for _, movement := range []bool{false, true} {
		kw := ipc.KeywordGC | ipc.KeywordSymbols | ipc.KeywordContention | ipc.KeywordAppDomainResourceManagement |
			ipc.KeywordThreading | ipc.KeywordType | ipc.KeywordAllocationSampling | ipc.KeywordException | ipc.KeywordWaitHandle
		if movement {
			kw |= ipc.KeywordGCSurvivalAndMovement
		}
		before := []ipc.Provider{runtime(kw&^ipc.KeywordAppDomainResourceManagement, ipc.LevelVerbose), sampler}
		if got := web.PageProviders(movement); !reflect.DeepEqual(got, before) {
			t.Errorf("report page (movement %v): derived %+v; before, without AppDomainResourceManagement: %+v", movement, got, before)
		}
	}

	// The monitor with Locks alone (clrspy top --locks): before, GC and
	// Contention. The derived set adds the keywords of the thread events
	// package locks reads to name a lock's owner (ThreadCreated carries
	// AppDomainResourceManagement|Threading; no single-keyword event
	// covers it, so both come): a live top now names the owners a file's
	// locks report names. With ThreadPool too (serve, top --locks
	// --threadpool) the pool's Threading events cover ThreadCreated and
	// nothing changes (the serve row above).
	if got, want := monitor.Providers(&monitor.Options{NoCounters: true, Locks: true}), []ipc.Provider{runtime(ipc.KeywordGC|ipc.KeywordContention|
		ipc.KeywordAppDomainResourceManagement|ipc.KeywordThreading, ipc.LevelInformational)}; !reflect.DeepEqual(got, want) {
		t.Errorf("monitor (top --locks): derived %+v; want %+v", got, want)
	}
	// The monitor with ThreadPool alone (clrspy top --threadpool): before,
	// GC and Threading. The derived set is package threadpool's events an
	// informational session gets (its verbose ones, wait handles and work
	// items, are left to clrspy threadpool), which adds Contention: the
	// analysis names blocking sites from contention on pool threads, as it
	// does on a file. Serve's monitors (Locks too) had it already.
	if got, want := monitor.Providers(&monitor.Options{NoCounters: true, ThreadPool: true}), []ipc.Provider{runtime(ipc.KeywordGC|ipc.KeywordThreading|
		ipc.KeywordContention, ipc.LevelInformational)}; !reflect.DeepEqual(got, want) {
		t.Errorf("monitor (top --threadpool): derived %+v; want %+v", got, want)
	}

	// record --profile contention: before, the same keywords at the
	// informational level. The profile promises wait-handle waits, and
	// WaitHandleWaitStart/Stop are verbose events (manifest level
	// win:Verbose): an informational session never got one. The derived
	// set asks for the verbose level they need (as `clrspy threadpool`
	// always did), which also brings the Threading keyword's verbose pool
	// events (adjustment stats, work-item enqueues where the runtime writes
	// them). Measured on the starve workload (8 blocked items): 112
	// WaitHandleWaitStart events in the verbose recording, none at the
	// informational level; 6 more pool events.
	before := []ipc.Provider{runtime(locksKW|ipc.KeywordWaitHandle, ipc.LevelInformational)}
	before[0].Level = ipc.LevelVerbose
	if got := profile("contention"); !reflect.DeepEqual(got, before) {
		t.Errorf("record --profile contention: derived %+v; before, verbose: %+v", got, before)
	}
}

// providersOf is the providers of a command's Set.
func providersOf[T any](s *analysis.Set, _ T) []ipc.Provider { return s.Providers() }

// gcSetProviders is the gc command's providers (for a live target).
func gcSetProviders(sample bool) []ipc.Provider {
	s, _, _ := gcSet(gcpause.Options{}, false, false)
	if sample {
		return append(s.Providers(), ipc.SampleProfiler)
	}
	return s.Providers()
}

// specProviders is the providers of a Set of one analysis with spec sp.
func specProviders(sp analysis.Spec) []ipc.Provider {
	s := analysis.NewSet()
	analysis.Add(s, sp, func(*nettrace.Header) *stacks.Builder { return nil })
	return s.Providers()
}

// triageSetProviders is the triage command's session's providers.
func triageSetProviders() []ipc.Provider {
	s, _ := capture.NewTriage("")
	return append(s.Providers(), triageExtra(false, &counters.Options{Interval: time.Second})...)
}
