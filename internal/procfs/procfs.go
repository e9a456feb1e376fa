package procfs

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Mapping is one file-backed range of a process's address space.
type Mapping struct {
	Start, End uint64
	Offset     uint64 // file offset of Start
	Perms      string // "r-xp" etc.
	Path       string
}

// ParseMaps reads the file-backed ranges of a /proc/PID/maps text (paths
// starting with "/"). Lines it cannot read are skipped.
func ParseMaps(text string) []Mapping {
	var out []Mapping
	for line := range strings.SplitSeq(text, "\n") {
		f := strings.Fields(line)
		if len(f) < 6 || !strings.HasPrefix(f[5], "/") {
			continue
		}
		lo, hi, ok := strings.Cut(f[0], "-")
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		off, err3 := strconv.ParseUint(f[2], 16, 64)
		if err1 != nil || err2 != nil || err3 != nil || end <= start {
			continue
		}
		out = append(out, Mapping{Start: start, End: end, Offset: off, Perms: f[1], Path: strings.Join(f[5:], " ")})
	}
	return out
}

// Maps reads and parses /proc/PID/maps.
func Maps(pid int) ([]Mapping, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return nil, err
	}
	return ParseMaps(string(b)), nil
}

// Comm is a process's (or, with tid, a thread's) name, or "" when it is
// gone or unreadable.
func Comm(pid int, tid uint64) string {
	p := fmt.Sprintf("/proc/%d/comm", pid)
	if tid != 0 {
		p = fmt.Sprintf("/proc/%d/task/%d/comm", pid, tid)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// Threads lists a process's thread ids.
func Threads(pid int) ([]uint64, error) {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return nil, err
	}
	out := make([]uint64, 0, len(ents))
	for _, e := range ents {
		if tid, err := strconv.ParseUint(e.Name(), 10, 64); err == nil {
			out = append(out, tid)
		}
	}
	return out, nil
}

// Cmdline is a process's command line with spaces between arguments, or
// "" when it is gone or unreadable.
func Cmdline(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))
}
