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
	ts, err := SchedThreads(pid)
	var total int64
	for _, v := range ts {
		total += v
	}
	return total, err
}

// SchedThreads is SchedNanos per live thread (by thread id).
func SchedThreads(pid int) (map[uint64]int64, error) {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := make(map[uint64]int64, len(ents))
	for _, e := range ents {
		tid, err := strconv.ParseUint(e.Name(), 10, 64)
		if err != nil {
			continue
		}
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
			out[tid] = run + wait
		}
	}
	return out, nil
}
