package procfs

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Mapping is one line of /proc/PID/maps: a range of a process's address
// space.
type Mapping struct {
	Start, End uint64
	Offset     uint64 // file offset of Start
	Perms      string // "r-xp"
	Inode      uint64
	Path       string // "" for anonymous memory; "[heap]", "[vdso]"... for special ones
}

// Exec reports whether the mapping is executable.
func (m *Mapping) Exec() bool { return len(m.Perms) >= 3 && m.Perms[2] == 'x' }

// FileBacked reports whether the mapping comes from a file the tools can
// open (not anonymous, not a pseudo-mapping like [vdso], not a deleted
// file or a memfd).
func (m *Mapping) FileBacked() bool {
	return m.Inode != 0 && strings.HasPrefix(m.Path, "/") && !strings.HasSuffix(m.Path, " (deleted)") &&
		!strings.HasPrefix(m.Path, "/memfd:")
}

// ParseMaps reads a /proc/PID/maps text, every line of it (anonymous and
// special mappings too). Lines it cannot read are skipped.
func ParseMaps(b []byte) []Mapping {
	var out []Mapping
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		if m, ok := parseMapLine(sc.Text()); ok {
			out = append(out, m)
		}
	}
	return out
}

func parseMapLine(line string) (Mapping, bool) {
	// address perms offset dev inode [path]; the path may contain spaces.
	var m Mapping
	f := make([]string, 0, 6)
	rest := line
	for i := 0; i < 5; i++ {
		rest = strings.TrimLeft(rest, " ")
		j := strings.IndexByte(rest, ' ')
		if j < 0 {
			if i < 4 {
				return m, false
			}
			j = len(rest)
		}
		f = append(f, rest[:j])
		rest = rest[j:]
	}
	lo, hi, ok := strings.Cut(f[0], "-")
	if !ok {
		return m, false
	}
	var err error
	if m.Start, err = strconv.ParseUint(lo, 16, 64); err != nil {
		return m, false
	}
	if m.End, err = strconv.ParseUint(hi, 16, 64); err != nil || m.End <= m.Start {
		return m, false
	}
	m.Perms = f[1]
	if m.Offset, err = strconv.ParseUint(f[2], 16, 64); err != nil {
		return m, false
	}
	if m.Inode, err = strconv.ParseUint(f[4], 10, 64); err != nil {
		return m, false
	}
	m.Path = strings.TrimLeft(rest, " ")
	return m, true
}

// Files keeps the mappings whose path is a file's (starting with "/"),
// deleted files and memfds included: what names native frames.
func Files(ms []Mapping) []Mapping {
	out := ms[:0]
	for _, m := range ms {
		if strings.HasPrefix(m.Path, "/") {
			out = append(out, m)
		}
	}
	return out
}

// Maps reads /proc/PID/maps and returns its file mappings (Files).
func Maps(pid int) ([]Mapping, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return nil, err
	}
	return Files(ParseMaps(b)), nil
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
