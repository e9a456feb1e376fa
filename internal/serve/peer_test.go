package serve

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clrspy/clrspy/internal/fleet"
	"github.com/clrspy/clrspy/internal/plant"
	"github.com/clrspy/clrspy/ipc"
)

func TestMain(m *testing.M) {
	plant.MaybeListen() // the fake runtimes of another user are this binary
	os.Exit(m.Run())
}

// TestListenPeerClaimsPid: issue 29's item 2 through the daemon. A fake
// runtime run by another user connects to the diagnostic port claiming
// the pid of a root process (this test's): it is never a target, so
// /targets does not list it, no series carries that pid and no profile
// (the perf sampler least of all) is taken of the root process; the
// refusal is counted (clrspy_attach_errors_total{reason="pid_mismatch"})
// and logged as a warning.
func TestListenPeerClaimsPid(t *testing.T) {
	uid, gid := plant.User(t)
	dir := plant.StickyDir(t)
	d, log := run(t, Config{Config: fleet.Config{DiagnosticPort: filepath.Join(dir, "port.sock"), PortMode: 0o666, NoAttach: true}})
	h, err := d.Handler(HandlerOptions{HeapEvery: -1, ProfileEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	root := strconv.Itoa(os.Getpid())
	plant.FakeRuntime(t, filepath.Join(dir, "port.sock"), uid, gid, false, os.Getpid(), [16]byte{7})
	waitFor(t, 10*time.Second, "the refusal counted", func() bool { return d.fleet.Health().AttachErrors[ipc.RejectPid] == 1 })
	waitFor(t, 5*time.Second, "the refusal logged", func() bool { return strings.Contains(log.String(), "refused runtime connections") })
	time.Sleep(300 * time.Millisecond)
	if ts := d.List(); len(ts) != 0 {
		t.Errorf("targets: %+v", ts)
	}
	if rec := get(t, h, "/debug/pprof/profile?pid="+root+"&seconds=1&sampler=perf"); rec.Code != 404 {
		t.Errorf("a perf profile of the claimed pid: %d %s", rec.Code, rec.Body)
	}
	if m := get(t, h, "/metrics").Body.String(); strings.Contains(m, `pid="`+root+`"`) || !strings.Contains(m, `clrspy_attach_errors_total{reason="pid_mismatch"} 1`) {
		t.Errorf("metrics:\n%s", m)
	}
}
