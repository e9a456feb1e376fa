package source

import (
	"os"
	"testing"

	"github.com/clrspy/clrspy/internal/procfs"
)

// TestProcWatcherFinish: a watch of the test process hands over its
// mappings (its own executable among them) and names its main thread; a
// nil watch (no live process) does neither.
func TestProcWatcherFinish(t *testing.T) {
	var none *ProcWatcher
	if names := none.Finish(func([]procfs.Mapping) { t.Error("a nil watch set mappings") }); names != nil {
		t.Errorf("a nil watch named threads: %v", names)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var got []procfs.Mapping
	names := WatchProc(os.Getpid()).Finish(func(ms []procfs.Mapping) { got = ms })
	found := false
	for _, m := range got {
		found = found || m.Path == exe
	}
	if !found {
		t.Errorf("%d mappings, none of %s", len(got), exe)
	}
	if n := names[uint64(os.Getpid())]; n == "" || n != procfs.Comm(os.Getpid(), 0) {
		t.Errorf("main thread named %q, comm %q", n, procfs.Comm(os.Getpid(), 0))
	}
}
