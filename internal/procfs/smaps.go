package procfs

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// SmapsEntry is one mapping of /proc/PID/smaps: its maps line and the
// kernel's page counts for it, in bytes.
type SmapsEntry struct {
	Mapping
	Rss, Pss        uint64
	SharedClean     uint64
	SharedDirty     uint64
	PrivateClean    uint64
	PrivateDirty    uint64
	Anonymous, Swap uint64
	Flags           []string // VmFlags: "rd", "wr", "dd" (not dumped), "nr" (no swap reserve), ...
}

// HasFlag reports whether the mapping's VmFlags hold f.
func (e *SmapsEntry) HasFlag(f string) bool {
	for _, x := range e.Flags {
		if x == f {
			return true
		}
	}
	return false
}

// Size is the mapping's virtual size.
func (e *SmapsEntry) Size() uint64 { return e.End - e.Start }

// ParseSmaps reads a /proc/PID/smaps text. A mapping's counters follow
// its maps line; lines it does not know are skipped.
func ParseSmaps(b []byte) []SmapsEntry {
	var out []SmapsEntry
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if k, v, ok := smapsField(line); ok {
			if len(out) == 0 {
				continue
			}
			e := &out[len(out)-1]
			switch k {
			case "VmFlags":
				e.Flags = strings.Fields(v)
			case "Rss":
				e.Rss = kb(v)
			case "Pss":
				e.Pss = kb(v)
			case "Shared_Clean":
				e.SharedClean = kb(v)
			case "Shared_Dirty":
				e.SharedDirty = kb(v)
			case "Private_Clean":
				e.PrivateClean = kb(v)
			case "Private_Dirty":
				e.PrivateDirty = kb(v)
			case "Anonymous":
				e.Anonymous = kb(v)
			case "Swap":
				e.Swap = kb(v)
			}
			continue
		}
		if m, ok := parseMapLine(line); ok {
			out = append(out, SmapsEntry{Mapping: m})
		}
	}
	return out
}

// smapsField splits a "Key:   value" line; maps lines (which start with a
// hex range) are not fields.
func smapsField(line string) (key, val string, ok bool) {
	i := strings.IndexByte(line, ':')
	if i <= 0 {
		return "", "", false
	}
	key = line[:i]
	for _, c := range key {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c == '_') {
			return "", "", false
		}
	}
	return key, strings.TrimSpace(line[i+1:]), true
}

// kb reads "123 kB" as bytes.
func kb(v string) uint64 {
	v = strings.TrimSpace(strings.TrimSuffix(v, "kB"))
	n, _ := strconv.ParseUint(v, 10, 64)
	return n * 1024
}

// Smaps reads /proc/PID/smaps.
func Smaps(pid int) ([]SmapsEntry, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps", pid))
	if err != nil {
		return nil, err
	}
	return ParseSmaps(b), nil
}

// ThreadStackPointers reads each thread's stack pointer from
// /proc/PID/task/TID/syscall (threads blocked in a system call; a running
// thread says "running" and is left out). It needs the right to ptrace the
// process; threads it cannot read are left out.
func ThreadStackPointers(pid int) map[int]uint64 {
	out := map[int]uint64{}
	dirs, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", pid))
	for _, d := range dirs {
		tid, err := strconv.Atoi(filepath.Base(d))
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(d, "syscall"))
		if err != nil {
			continue
		}
		if sp, ok := ParseSyscallSP(string(b)); ok {
			out[tid] = sp
		}
	}
	return out
}

// ParseSyscallSP reads the stack pointer of a /proc/PID/task/TID/syscall
// line: "NR ARG1 ... ARG6 SP PC" for a blocked thread, "-1 SP PC" for one
// blocked outside a system call; "running" has none.
func ParseSyscallSP(s string) (uint64, bool) {
	f := strings.Fields(s)
	if len(f) < 3 {
		return 0, false
	}
	sp, err := strconv.ParseUint(strings.TrimPrefix(f[len(f)-2], "0x"), 16, 64)
	if err != nil || sp == 0 {
		return 0, false
	}
	return sp, true
}
