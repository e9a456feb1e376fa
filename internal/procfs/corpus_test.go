//go:build compat

package procfs

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/clrspy/clrspy/internal/fuzzcorpus"
)

// TestFuzzCorpus keeps FuzzProcFiles's seeds: with -update-corpus only
// (they need live processes), the /proc files of processes with hostile
// names; otherwise it checks they are present.
func TestFuzzCorpus(t *testing.T) {
	fuzzcorpus.CheckPresent(t, "FuzzProcFiles", func() []fuzzcorpus.Seed { return liveProcFiles(t) })
}

// liveProcFiles reads the stat, status and environ files of processes
// whose names and environments discovery must survive: a comm with
// spaces and parentheses, one in its own pid namespace (two NSpid values).
func liveProcFiles(t *testing.T) []fuzzcorpus.Seed {
	var seeds []fuzzcorpus.Seed
	read := func(label string, pid int) {
		var args []any
		for _, f := range []string{"stat", "status", "environ"} {
			b, err := os.ReadFile(filepath.Join("/proc", fmt.Sprint(pid), f))
			if err != nil {
				t.Fatal(err)
			}
			args = append(args, b)
		}
		seeds = append(seeds, fuzzcorpus.Seed{Label: label, Args: args})
	}
	env := []string{"TMPDIR=/tmp/x y", "COMPlus_EnableDiagnostics=1", "DOTNET_EnableDiagnostics=0", "DOTNET_EnableDiagnostics_IPC=0"}
	// The comm is the executable's base name: a copy of sleep named like
	// the tail of a stat line.
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(sleep)
	if err != nil {
		t.Fatal(err)
	}
	hostile := filepath.Join(t.TempDir(), ") R 1 2 (x y")
	if err := os.WriteFile(hostile, b, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		label string
		argv  []string
	}{
		{"hostile-comm", []string{hostile, "30"}},
		{"pid-namespace", []string{"unshare", "--pid", "--fork", "sleep", "30"}},
	} {
		cmd := exec.Command(c.argv[0], c.argv[1:]...)
		cmd.Env = env
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		pid := cmd.Process.Pid
		time.Sleep(200 * time.Millisecond)
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid)); err == nil && len(b) > 0 {
			fmt.Sscan(string(b), &pid) // the sleep inside the namespace
		}
		read(c.label, pid)
		cmd.Process.Kill()
		cmd.Wait()
	}
	return seeds
}
