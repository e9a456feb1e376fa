package procfs

import (
	"os/exec"
	"testing"
	"time"
)

// TestStartTime: a process started now started now. /proc/stat's boot
// time is whole seconds, so the figure is good to a second.
func TestStartTime(t *testing.T) {
	t0 := time.Now()
	cmd := exec.Command("sleep", "5")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t1 := time.Now()
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	st, err := StartTime(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if st.Before(t0.Add(-time.Second)) || st.After(t1.Add(time.Second)) {
		t.Errorf("start %v, started between %v and %v", st, t0, t1)
	}
	if _, err := StartTime(1 << 30); err == nil {
		t.Error("no error for a process that does not exist")
	}
}
