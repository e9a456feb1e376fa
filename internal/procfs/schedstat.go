package procfs

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// SchedNanos sums, over a process's live threads, the time they ran on a
// CPU and the time they waited runnable on a run queue
// (/proc/PID/task/TID/schedstat, first two fields). Its growth over an
// interval is the CPU the process asked for, which a loaded machine does
// not shrink (the share it got, utime+stime, does shrink). Threads that
// exited are no longer counted.
func SchedNanos(pid int) (int64, error) {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	var total int64
	for _, e := range ents {
		b, err := os.ReadFile(dir + "/" + e.Name() + "/schedstat")
		if err != nil {
			continue // the thread exited
		}
		f := strings.Fields(string(b))
		if len(f) < 2 {
			continue
		}
		run, err1 := strconv.ParseInt(f[0], 10, 64)
		wait, err2 := strconv.ParseInt(f[1], 10, 64)
		if err1 == nil && err2 == nil {
			total += run + wait
		}
	}
	return total, nil
}
