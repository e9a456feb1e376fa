package runinfo

import (
	"os"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/nettrace"
)

func read(t *testing.T, name string) (Info, uint64) {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := nettrace.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	a := New(r.Header())
	for {
		ev, err := r.Next()
		if err != nil {
			break
		}
		a.Event(ev)
	}
	st := a.Stats()
	if st.DecodeErrors != 0 {
		t.Errorf("%d decode errors: %v", st.DecodeErrors, st.FirstError)
	}
	return a.Result(), st.Events
}

// The workload recording: launched by clrspy on .NET 10.0.12, workstation
// concurrent GC (mixed.workload.json says serverGC false, concurrentGC
// true), Linux x64.
func TestMixedTrace(t *testing.T) {
	info, used := read(t, "../testdata/traces/mixed.nettrace")
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
	if !strings.HasSuffix(info.CommandLine, "/Workload.dll mixed seconds=1.5") {
		t.Errorf("command line %q", info.CommandLine)
	}
}

// A trace without these events (a third-party .NET Core 3.0 recording)
// says nothing rather than guessing.
func TestTraceWithoutInfo(t *testing.T) {
	info, used := read(t, "../../shared/traces/perfview__eventpipe-dotnetcore3.0-win-x64-objver4.nettrace")
	if used != 0 || info != (Info{}) {
		t.Errorf("used %d, info %+v", used, info)
	}
}
