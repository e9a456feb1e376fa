package serve

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clrspy/clrspy/internal/fleet"
	"github.com/clrspy/clrspy/internal/flightrec"
)

// TestCaptureFailures: captures into a directory that went away fail;
// the first failure of the streak is one warning, each is counted under
// its reason, the captures back off (skipped ones counted too), and once
// the directory is back a capture is saved and the streak ends.
func TestCaptureFailures(t *testing.T) {
	old := captureBackoff
	captureBackoff = 500 * time.Millisecond
	defer func() { captureBackoff = old }()
	dir := t.TempDir()
	path, name := alias(t, dir)
	capDir := filepath.Join(t.TempDir(), "caps")
	os.Mkdir(capDir, 0o755)
	// Every GC is "long" (1 µs): churn makes several a second.
	d, log := run(t, Config{Config: fleet.Config{Names: []string{name}}, Capture: Capture{Dir: capDir,
		Window: flightrec.Window{Over: time.Microsecond, Before: 200 * time.Millisecond, After: 50 * time.Millisecond}}})
	if err := os.Remove(capDir); err != nil {
		t.Fatal(err)
	}
	p := startAs(t, path, nil, "churn", "seconds=12", "wait=1")
	pid := strconv.Itoa(p.Pid)
	waitFor(t, 20*time.Second, "session open", func() bool { ti, _ := info(d, pid); return ti.State == "running" })
	p.Release()
	waitFor(t, 20*time.Second, "a failed capture", func() bool { return d.fleet.Health().CaptureErrors["missing_dir"] > 0 })
	time.Sleep(time.Second)
	if err := os.Mkdir(capDir, 0o755); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "a capture saved", func() bool {
		ents, _ := os.ReadDir(capDir)
		for _, e := range ents {
			if captureName.MatchString(e.Name()) {
				return true
			}
		}
		return false
	})
	errs := d.fleet.Health().CaptureErrors
	text := log.String()
	warns := 0
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, "capture failed; captures pause") {
			warns++
			if !strings.Contains(l, "WARN") || !strings.Contains(l, "missing_dir") {
				t.Errorf("the warning: %q", l)
			}
		}
	}
	t.Logf("capture errors %v", errs)
	if warns != 1 || errs["missing_dir"] < 1 || !strings.Contains(text, "captures work again") {
		t.Errorf("%d warnings, errors %v, back to work: %v\n%s", warns, errs, strings.Contains(text, "captures work again"), text)
	}
	// The backoff bounds the attempts: at most one per doubling pause
	// (0.5, 1, 2, ... s) over the seconds the directory was missing.
	if errs["missing_dir"] > 6 {
		t.Errorf("%d failed attempts while backing off", errs["missing_dir"])
	}
	if _, err := p.Wait(60 * time.Second); err != nil {
		t.Fatal(err)
	}
}

// TestLastEventAge: a SIGSTOPped target stays up, but its last event's age
// grows with the wall clock; once continued it falls back under the
// counters' interval (1 s here) plus the read pacing.
func TestLastEventAge(t *testing.T) {
	dir := t.TempDir()
	path, name := alias(t, dir)
	d, _ := run(t, Config{Config: fleet.Config{Names: []string{name}, CounterInterval: time.Second}})
	p := startAs(t, path, nil, "idle", "seconds=60", "gcEveryMs=100")
	pid := strconv.Itoa(p.Pid)
	age := func() (time.Duration, bool) {
		tg, ok := exported(d, pid)
		return tg.LastEventAge, ok && tg.Up
	}
	// Live: counters every second, GCs every 100 ms, read twice a second.
	// A loaded machine delays the runtime's flushes: 5 s is generous.
	waitFor(t, 20*time.Second, "a live target", func() bool { a, up := age(); return up && a < 5*time.Second })
	if err := syscall.Kill(p.Pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(p.Pid, syscall.SIGCONT)
	waitFor(t, 30*time.Second, "the stopped target's age past 6 s", func() bool { a, _ := age(); return a > 6*time.Second })
	a1, up := age()
	time.Sleep(2 * time.Second)
	a2, up2 := age()
	t.Logf("stopped: age %v, 2 s later %v", a1.Round(time.Millisecond), a2.Round(time.Millisecond))
	if !up || !up2 {
		t.Errorf("a stopped target is not up")
	}
	if g := a2 - a1; g < 1500*time.Millisecond || g > 3*time.Second {
		t.Errorf("the age grew %v in 2 s", g)
	}
	syscall.Kill(p.Pid, syscall.SIGCONT)
	waitFor(t, 20*time.Second, "the continued target's age back under 5 s", func() bool { a, _ := age(); return a < 5*time.Second })
}
