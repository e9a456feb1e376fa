package procfs

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// ClockTicks is the kernel's USER_HZ, the unit of /proc/PID/stat times:
// 100 on every Linux architecture Go runs on.
const ClockTicks = 100

// StartTime is when a process started: its start time in /proc/PID/stat
// (clock ticks after boot) plus the boot time in /proc/stat.
func StartTime(pid int) (time.Time, error) {
	ticks, err := StartTicks(pid)
	if err != nil {
		return time.Time{}, err
	}
	st, err := os.ReadFile("/proc/stat")
	if err != nil {
		return time.Time{}, err
	}
	for _, l := range strings.Split(string(st), "\n") {
		if v, ok := strings.CutPrefix(l, "btime "); ok {
			boot, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return time.Time{}, fmt.Errorf("/proc/stat: btime: %w", err)
			}
			return time.Unix(boot, 0).Add(time.Duration(ticks) * time.Second / ClockTicks), nil
		}
	}
	return time.Time{}, fmt.Errorf("/proc/stat: no btime")
}

// StartTicks is a process's start time in clock ticks after boot (field
// 22 of /proc/PID/stat): with the pid, it names one process for good (a
// pid reused later has another start time).
func StartTicks(pid int) (int64, error) {
	b, err := file(pid, "stat")
	if err != nil {
		return 0, err
	}
	ticks, err := ParseStartTicks(b)
	if err != nil {
		return 0, fmt.Errorf("/proc/%d/%w", pid, err)
	}
	return ticks, nil
}
