//go:build compat

package threadpool

import (
	"reflect"
	"testing"

	"github.com/clrspy/clrspy/internal/tracetest"
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
