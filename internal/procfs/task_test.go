package procfs

import (
	"os/exec"
	"runtime"
	"testing"
	"time"
)

// TestReadTask: a `sleep 30` child is found sleeping in clock_nanosleep
// (or nanosleep), named sleep.
func TestReadTask(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	pid := cmd.Process.Pid
	var k Task
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if k = ReadTask(pid, uint64(pid)); k.Name == "sleep" && k.State == 'S' && k.Syscall >= 0 {
			break
		}
	}
	name := SyscallName(k.Syscall)
	t.Logf("%+v (%s)", k, name)
	if k.Name != "sleep" || k.State != 'S' {
		t.Fatalf("task %+v, want sleep sleeping", k)
	}
	if k.Syscall != -2 && runtime.GOARCH == "amd64" && name != "clock_nanosleep" && name != "nanosleep" {
		t.Errorf("syscall %d (%s), want clock_nanosleep", k.Syscall, name)
	}
	if g := ReadTask(pid, 1<<40); g.State != 0 {
		t.Errorf("a thread that does not exist: %+v", g)
	}
}
