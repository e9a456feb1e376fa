package runinfo

import (
	"strings"
	"testing"

	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/nettrace"
)

func read(t *testing.T, r *nettrace.Reader) (Info, uint64) {
	t.Helper()
	a := New(r.Header())
	if err := tracetest.ReadAll(t, r, a.Event); err != nil {
		t.Fatal(err)
	}
	st := a.Stats()
	if st.DecodeErrors != 0 {
		t.Errorf("%d decode errors: %v", st.DecodeErrors, st.FirstError)
	}
	return a.Result(), st.Events
}

// The workload recording: launched by clrspy on .NET 10.0.12, workstation
// concurrent GC (composite.workload.json says serverGC false, concurrentGC
// true), Linux x64.
func TestMixedTrace(t *testing.T) {
	info, used := read(t, tracetest.Open(t, "composite.nettrace", nettrace.NewReader))
	// ProcessInfo once, RuntimeInformation from the runtime provider and
	// again from the rundown.
	if used != 3 {
		t.Errorf("%d events used, want 3", used)
	}
	if info.Runtime != "10.0.12" || info.GC != "workstation, concurrent" || info.ServerGC || !info.ConcurrentGC {
		t.Errorf("runtime %q, GC %q (server %v, concurrent %v)", info.Runtime, info.GC, info.ServerGC, info.ConcurrentGC)
	}
	if info.OS != "Linux" || info.Arch != "x64" {
		t.Errorf("OS %q arch %q", info.OS, info.Arch)
	}
	if !strings.HasSuffix(info.CommandLine, "/Workload.dll composite seconds=1.5") {
		t.Errorf("command line %q", info.CommandLine)
	}
}
