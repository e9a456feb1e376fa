package main

import (
	"reflect"
	"testing"
	"time"

	"github.com/clrspy/clrspy/counters"
	"github.com/clrspy/clrspy/internal/web"
	"github.com/clrspy/clrspy/ipc"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/perf"
)

// The sessions' providers derived from the analyses' events
// (clrevents.ProvidersFor) against the lists the commands wrote by hand
// before (written out here as they were). They are equal but for the level
// of record --profile contention, explained in its row.
func TestDerivedProvidersEqualHandWritten(t *testing.T) {
	runtime := func(kw uint64, level uint8) ipc.Provider {
		return ipc.Provider{Name: nettrace.ProviderRuntime, Keywords: kw, Level: level}
	}
	sampler := ipc.Provider{Name: nettrace.ProviderSampleProfiler, Keywords: ipc.SampleProfilerKeywords, Level: ipc.LevelInformational}
	ctrs := counters.Providers(&counters.Options{Interval: time.Second})
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
		{"gc", gcProviders(false), []ipc.Provider{runtime(ipc.KeywordGC, ipc.LevelInformational)}},
		{"gc --sample", gcProviders(true), []ipc.Provider{runtime(ipc.KeywordGC, ipc.LevelInformational), sampler}},
		{"exceptions", exceptionsProviders(),
			[]ipc.Provider{runtime(ipc.KeywordException|ipc.KeywordSymbols, ipc.LevelInformational)}},
		{"locks", locksProviders(false), []ipc.Provider{runtime(ipc.KeywordLocks, ipc.LevelInformational)}},
		{"locks --object-types", locksProviders(true), []ipc.Provider{runtime(ipc.KeywordLocks|ipc.KeywordType|
			ipc.KeywordGCSampledObjectAllocationHigh|ipc.KeywordGCHeapAndTypeNames, ipc.LevelInformational)}},
		{"threadpool", threadPoolProviders(false), append([]ipc.Provider{runtime(ipc.KeywordThreading|ipc.KeywordWaitHandle|
			ipc.KeywordContention|ipc.KeywordSymbols, ipc.LevelVerbose)}, ctrs...)},
		{"threadpool --samples", threadPoolProviders(true), append(append([]ipc.Provider{runtime(ipc.KeywordThreading|ipc.KeywordWaitHandle|
			ipc.KeywordContention|ipc.KeywordSymbols, ipc.LevelVerbose)}, ctrs...), sampler)},
		{"heap", heapProviders(), []ipc.Provider{runtime(ipc.KeywordGC|ipc.KeywordType|ipc.KeywordGCSurvivalAndMovement|
			ipc.KeywordAllocationSampling|ipc.KeywordSymbols, ipc.LevelVerbose)}},
		{"profile (eventpipe sampler)", profileProviders, []ipc.Provider{sampler, runtime(ipc.KeywordSymbols, ipc.LevelInformational)}},
		{"profile (perf sampler's session)", perf.SessionProviders, []ipc.Provider{runtime(ipc.KeywordGC|ipc.KeywordSymbols, ipc.LevelInformational)}},
		{"record --profile threadpool", profile("threadpool"), []ipc.Provider{
			runtime(ipc.KeywordThreading|ipc.KeywordWaitHandle|ipc.KeywordContention|ipc.KeywordSymbols, ipc.LevelVerbose),
			{Name: "System.Runtime", Level: ipc.LevelInformational, Args: "EventCounterIntervalSec=1"},
		}},
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
	before := []ipc.Provider{runtime(ipc.KeywordLocks|ipc.KeywordWaitHandle, ipc.LevelInformational)}
	before[0].Level = ipc.LevelVerbose
	if got := profile("contention"); !reflect.DeepEqual(got, before) {
		t.Errorf("record --profile contention: derived %+v; before, verbose: %+v", got, before)
	}
}
