package symtab

import (
	"bufio"
	"bytes"
	"strconv"
	"strings"
)

// Map is one line of /proc/PID/maps.
type Map struct {
	Start, End uint64
	Offset     uint64 // file offset of Start
	Perms      string // "r-xp"
	Inode      uint64
	Path       string // "" for anonymous memory; "[heap]", "[vdso]"... for special ones
}

// Exec reports whether the mapping is executable.
func (m *Map) Exec() bool { return len(m.Perms) >= 3 && m.Perms[2] == 'x' }

// FileBacked reports whether the mapping comes from a file the tools can
// open (not anonymous, not a pseudo-mapping like [vdso], not a deleted
// file or a memfd).
func (m *Map) FileBacked() bool {
	return m.Inode != 0 && strings.HasPrefix(m.Path, "/") && !strings.HasSuffix(m.Path, " (deleted)") &&
		!strings.HasPrefix(m.Path, "/memfd:")
}

// ParseMaps reads a /proc/PID/maps text. Lines it cannot read are
// skipped.
func ParseMaps(b []byte) []Map {
	var out []Map
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		if m, ok := parseMapLine(sc.Text()); ok {
			out = append(out, m)
		}
	}
	return out
}

func parseMapLine(line string) (Map, bool) {
	// address perms offset dev inode [path]; the path may contain spaces.
	var m Map
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
	dash := strings.IndexByte(f[0], '-')
	if dash < 0 {
		return m, false
	}
	var err error
	if m.Start, err = strconv.ParseUint(f[0][:dash], 16, 64); err != nil {
		return m, false
	}
	if m.End, err = strconv.ParseUint(f[0][dash+1:], 16, 64); err != nil || m.End <= m.Start {
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
