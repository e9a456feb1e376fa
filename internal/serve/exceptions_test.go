package serve

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clrspy/clrspy/internal/fleet"
)

// TestExceptionsAttach: serve --exceptions attached to a process already
// throwing (the throws workload, 300 InvalidOperationExceptions a second
// from ExcOrders.Lookup, compiled and tiered up before the attach) names
// the throw site through its second, rundown session while the process
// runs, and counts no more than the workload threw.
func TestExceptionsAttach(t *testing.T) {
	path, name := alias(t, t.TempDir())
	d, _ := run(t, Config{Config: fleet.Config{Names: []string{name}, Exceptions: true, Grace: 30 * time.Second}})
	p := startAs(t, path, nil, "throws", "rate=300", "seconds=12")
	pid := strconv.Itoa(p.Pid)
	waitFor(t, 20*time.Second, "session open", func() bool { ti, _ := info(d, pid); return ti.State == "running" })
	var count int64
	var site string
	running := false
	waitFor(t, 20*time.Second, "the throw site named", func() bool {
		tg, ok := exported(d, pid)
		if !ok || tg.Snapshot == nil || tg.Snapshot.Exceptions == nil || len(tg.Snapshot.Exceptions.Types) == 0 {
			return false
		}
		ty := tg.Snapshot.Exceptions.Types[0]
		if ty.Type != "System.InvalidOperationException" || len(ty.ThrowSites) == 0 {
			return false
		}
		count, site = ty.Count, ty.ThrowSites[0].Site
		running = !p.Exited()
		return strings.HasPrefix(site, "Workload.ExcOrders.Lookup(")
	})
	res, err := p.Wait(60 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	thrown := res.Int("thrown")
	t.Logf("%d counted at %s before the workload ended, %d thrown in all", count, site, thrown)
	if count <= 0 || count > thrown {
		t.Errorf("%d counted, the workload threw %d", count, thrown)
	}
	// Without the rundown session the site is named only by the
	// monitoring session's own rundown, when the process has exited.
	if !running {
		t.Errorf("the site was named only once the workload had exited")
	}
}
