//go:build compat

package threadpool

import (
	"reflect"
	"testing"

	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/stacks"
)

// TestFieldsEqualTraceEventCompat: the thread-pool and wait events of the
// compatibility suite's .NET 10 traces decode as TraceEvent decodes them.
// The counts are those of clrspy stat and CATALOG.md.
func TestFieldsEqualTraceEventCompat(t *testing.T) {
	for name, want := range map[string]map[string]int{
		"filtrace__threadpool.nettrace": {
			"ThreadPoolWorkerThread/Start": 3, "ThreadPoolWorkerThread/Wait": 3,
			"ThreadPoolWorkerThreadAdjustment/Sample": 3, "ThreadPoolWorkerThreadAdjustment/Adjustment": 3,
			"ThreadPoolMinMaxThreads": 1,
		},
		"filtrace__wait.nettrace": {"WaitHandleWait/Start": 604, "WaitHandleWait/Stop": 604},
	} {
		t.Run(name, func(t *testing.T) {
			counts := compareWithTraceEvent(t, tracetest.CompatPath(t, name))
			if !reflect.DeepEqual(counts, want) {
				t.Errorf("TraceEvent's counts %v, want %v", counts, want)
			}
		})
	}
}

// TestFiltraceThreadPool: filtrace's .NET 10 starvation benchmark
// (DOTNET_ThreadPool_ForceMinWorkerThreads=1, work items sleeping on the
// pool; no WaitHandle events, stack samples of every thread): one
// starvation injection (2 → 3 threads) starts the one episode, and the
// samples name the sleeping work item as the blocking site.
func TestFiltraceThreadPool(t *testing.T) {
	r := tracetest.OpenFile(t, tracetest.CompatPath(t, "filtrace__threadpool.nettrace"), nettrace.NewReader)
	sym := stacks.NewSymbols(r.Header())
	a := New(r.Header(), Options{Symbols: sym})
	if err := tracetest.ReadAll(t, r, func(ev *nettrace.Event) { sym.Event(ev); a.Event(ev) }); err != nil {
		t.Fatal(err)
	}
	res := a.Result()
	if err := res.CheckValid(); err != nil {
		t.Error(err)
	}
	s := res.Summary
	if s.ThreadsMax != 3 || s.Injections != 2 || res.InjectionsByReason["starvation"] != 1 || s.MinWorkers != 1 || s.Source != "samples" {
		t.Errorf("summary %+v, injections %v", s, res.InjectionsByReason)
	}
	if len(res.Episodes) != 1 || res.Episodes[0].Trigger != "starvation injection" || res.Episodes[0].ThreadsBefore != 2 ||
		res.Episodes[0].ThreadsAfter != 3 {
		t.Errorf("episodes %+v", res.Episodes)
	}
	if len(res.Sites) != 1 || res.Sites[0].Site != "TraceQ.Fixtures.HotLoopBench.ThreadPoolStarveLoop+<>c__DisplayClass1_0.<StarveThreadPool>b__0" ||
		res.Sites[0].Calls != "System.Threading.Thread.Sleep" || res.Sites[0].SyncOverAsync {
		t.Errorf("sites %+v", res.Sites)
	}
}
