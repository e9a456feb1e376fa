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
	b, err := MapsText(pid)
	if err != nil {
		return nil, err
	}
	return Files(ParseMaps(b)), nil
}

// MapsText is the text of /proc/PID/maps (ParseMaps reads it).
func MapsText(pid int) ([]byte, error) { return file(pid, "maps") }

// Root is the path of a process's root directory as clrspy reaches it
// (/proc/PID/root): its files through its own mount namespace.
func Root(pid int) string { return Dir(pid) + "/root" }

// TaskFile reads /proc/PID/task/TID/name: one thread's stat, syscall,
// comm...
func TaskFile(pid, tid int, name string) ([]byte, error) {
	return os.ReadFile(Dir(pid) + "/task/" + strconv.Itoa(tid) + "/" + name)
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

// Self names clrspy's own process (/proc/self) where a pid is taken.
const Self = 0

// Dir is a process's directory, /proc/PID (/proc/self for Self).
func Dir(pid int) string {
	if pid == Self {
		return "/proc/self"
	}
	return "/proc/" + strconv.Itoa(pid)
}

// file reads /proc/PID/name.
func file(pid int, name string) ([]byte, error) { return os.ReadFile(Dir(pid) + "/" + name) }

// Exists reports whether /proc holds a process pid (a zombie included).
func Exists(pid int) bool {
	if pid <= 0 {
		return false
	}
	_, err := os.Stat(Dir(pid))
	return err == nil
}

// Pids lists the processes /proc shows, in its order (names only: no
// stat of each entry, a scan of a busy machine's /proc stays cheap).
func Pids() ([]int, error) {
	f, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	names, err := f.Readdirnames(-1)
	f.Close()
	if err != nil && len(names) == 0 {
		return nil, err
	}
	out := make([]int, 0, len(names))
	for _, n := range names {
		if n == "" || n[0] < '0' || n[0] > '9' {
			continue
		}
		if pid, err := strconv.Atoi(n); err == nil && pid > 0 {
			out = append(out, pid)
		}
	}
	return out, nil
}

// Status is the text of /proc/PID/status.
func Status(pid int) ([]byte, error) { return file(pid, "status") }

// StatusField returns the values of one "Name:\tv1\tv2" line of a
// /proc/PID/status text; nil when it has none.
func StatusField(status []byte, name string) []string {
	for _, l := range strings.Split(string(status), "\n") {
		if f, ok := strings.CutPrefix(l, name+":"); ok {
			return strings.Fields(f)
		}
	}
	return nil
}

// ParseNSpid reads the innermost pid of an NSpid line with more than one
// value: a process in a nested pid namespace.
func ParseNSpid(status []byte) (int, bool) {
	vals := StatusField(status, "NSpid")
	if len(vals) > 1 {
		if n, err := strconv.Atoi(vals[len(vals)-1]); err == nil && n > 0 {
			return n, true
		}
	}
	return 0, false
}

// NSpid is pid as its own (innermost) pid namespace numbers it, and
// whether that differs from pid; pid itself when unreadable.
func NSpid(pid int) (int, bool) {
	b, err := Status(pid)
	if err != nil {
		return pid, false
	}
	if n, ok := ParseNSpid(b); ok {
		return n, true
	}
	return pid, false
}

// ParseEuid reads the effective uid (the second value of the Uid line) of
// a /proc/PID/status text.
func ParseEuid(status []byte) (int, bool) {
	vals := StatusField(status, "Uid")
	if len(vals) < 2 {
		return 0, false
	}
	n, err := strconv.ParseUint(vals[1], 10, 32)
	if err != nil {
		return 0, false
	}
	return int(n), true
}

// Euid is the effective uid pid runs as. The status file says it even for
// a process that is not dumpable (whose /proc entries belong to root).
func Euid(pid int) (int, bool) {
	b, err := Status(pid)
	if err != nil {
		return 0, false
	}
	return ParseEuid(b)
}

// ParseStartTicks reads field 22 of a /proc/PID/stat line (the start time
// in clock ticks after boot). The command name (field 2) may hold spaces,
// parentheses and newlines: fields are counted from the last ')'.
func ParseStartTicks(stat []byte) (int64, error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("stat: no command field")
	}
	f := strings.Fields(string(stat[i+1:]))
	// f[0] is field 3 (state), so field 22 (starttime) is f[19].
	if len(f) < 20 {
		return 0, fmt.Errorf("stat: %d fields", len(f)+2)
	}
	ticks, err := strconv.ParseUint(f[19], 10, 63)
	if err != nil {
		return 0, fmt.Errorf("stat: starttime: %w", err)
	}
	return int64(ticks), nil
}

// Environ is a process's environment block (NUL-separated KEY=value).
func Environ(pid int) ([]byte, error) { return file(pid, "environ") }

// EnvValue is the value of key in an environment block, and whether it is
// set.
func EnvValue(env []byte, key string) (string, bool) {
	for _, kv := range bytes.Split(env, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, []byte(key+"=")); ok {
			return string(v), true
		}
	}
	return "", false
}

// RuntimeSetting is a .NET runtime setting in an environment block:
// DOTNET_name, else COMPlus_name (the runtime's precedence).
func RuntimeSetting(env []byte, name string) (string, bool) {
	if v, ok := EnvValue(env, "DOTNET_"+name); ok {
		return v, true
	}
	return EnvValue(env, "COMPlus_"+name)
}

// Args is a process's command line, one string per argument; nil when it
// is gone or unreadable (or a kernel thread's).
func Args(pid int) []string {
	b, err := file(pid, "cmdline")
	if err != nil || len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
}

// Namespace is the identity of one of a process's namespaces (kind "mnt",
// "pid"...: the target of /proc/PID/ns/KIND), "" when unreadable. Two
// processes share a namespace when theirs are equal and not "".
func Namespace(pid int, kind string) string {
	s, _ := os.Readlink(Dir(pid) + "/ns/" + kind)
	return s
}

// Uptime is the seconds since boot (/proc/uptime).
func Uptime() (float64, error) {
	b, err := os.ReadFile("/proc/uptime")
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0, fmt.Errorf("/proc/uptime: empty")
	}
	return strconv.ParseFloat(f[0], 64)
}

// MapsPath reports whether a process has a file mapped whose path holds
// part (read line by line: a process's maps may be megabytes); known is
// false when its maps cannot be read (an unreadable maps, another user's,
// reads as empty rather than failing to open).
func MapsPath(pid int, part string) (has, known bool) {
	f, err := os.Open(Dir(pid) + "/maps")
	if err != nil {
		return false, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	readAny := false
	for sc.Scan() {
		readAny = true
		if bytes.Contains(sc.Bytes(), []byte(part)) {
			return true, true
		}
	}
	return false, readAny
}

// TCPOwner is the uid that owns the TCP socket whose own address is local
// and whose peer's is remote, both in /proc/net/tcp's hex form
// ("0100007F:1F90"), looked up in /proc/net/tcp and /proc/net/tcp6; found
// is false when neither lists it.
func TCPOwner(local, remote string) (uid int, found bool, err error) {
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(table)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid ...
			fs := strings.Fields(sc.Text())
			if len(fs) < 8 || !strings.EqualFold(fs[1], local) || !strings.EqualFold(fs[2], remote) {
				continue
			}
			f.Close()
			uid, err := strconv.Atoi(fs[7])
			if err != nil {
				return -1, false, fmt.Errorf("%s: bad uid %q", table, fs[7])
			}
			return uid, true, nil
		}
		f.Close()
	}
	return -1, false, nil
}
