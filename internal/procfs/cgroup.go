package procfs

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// CgroupMemory is what a process's memory cgroup says of it: the limit
// that applies (the smallest of its cgroup's and its ancestors'), the
// usage of the cgroup that sets it, and OOM kills.
type CgroupMemory struct {
	Version int    // 1 or 2
	Dir     string // the process's cgroup directory (under /sys/fs/cgroup)
	// LimitDir is the directory whose limit applies (Dir or an ancestor);
	// "" when no cgroup on the way up has a limit.
	LimitDir string
	// Limit is the limit that applies in bytes; 0 when there is none.
	Limit uint64
	// Usage is memory.current (v2) or memory.usage_in_bytes (v1) of
	// LimitDir (of Dir when there is no limit).
	Usage uint64
	// OOMKills is memory.events' oom_kill (v2) or memory.oom_control's
	// oom_kill (v1) of LimitDir (Dir when no limit); -1 when the kernel
	// does not count them.
	OOMKills int64
	// Stat is memory.stat of Dir (anon, file, ... in bytes).
	Stat map[string]uint64
}

// Headroom is the limit less the usage (0 without a limit, or over it).
func (c *CgroupMemory) Headroom() uint64 {
	if c.Limit == 0 || c.Usage >= c.Limit {
		return 0
	}
	return c.Limit - c.Usage
}

// noLimit: v1 says "no limit" with a page-rounded 2^63-1; anything this
// large is no limit.
const noLimit = 1 << 62

// ErrNoMemoryCgroup: the process has no memory cgroup this reader can see.
var ErrNoMemoryCgroup = errors.New("no memory cgroup (neither a cgroup v2 with the memory controller nor a v1 memory hierarchy is mounted)")

// ReadCgroupMemory finds pid's memory cgroup through /proc/PID/cgroup and
// this process's mounts, and reads its limit and usage.
func ReadCgroupMemory(pid int) (*CgroupMemory, error) {
	cg, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return nil, err
	}
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	dir, version, err := MemoryCgroupDir(cg, mi)
	if err != nil {
		return nil, err
	}
	return ReadCgroupMemoryDir(dir, version, cgroupRoot(dir, mi))
}

// ReadCgroupMemoryDir reads the memory cgroup at dir (cgroup version 1 or
// 2), walking up to root (the hierarchy's mount point) for the limit.
func ReadCgroupMemoryDir(dir string, version int, root string) (*CgroupMemory, error) {
	c := &CgroupMemory{Version: version, Dir: dir, OOMKills: -1}
	limitFile, usageFile := "memory.max", "memory.current"
	if version == 1 {
		limitFile, usageFile = "memory.limit_in_bytes", "memory.usage_in_bytes"
	}
	if _, err := os.Stat(filepath.Join(dir, usageFile)); err != nil {
		return nil, fmt.Errorf("cgroup %s: %w", dir, err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		if v, ok := readLimit(filepath.Join(d, limitFile)); ok && (c.Limit == 0 || v < c.Limit) {
			c.Limit, c.LimitDir = v, d
		}
		if d == root || !strings.HasPrefix(d, root) || d == "/" || d == "." {
			break
		}
	}
	at := c.LimitDir
	if at == "" {
		at = dir
	}
	c.Usage, _ = readUint(filepath.Join(at, usageFile))
	if version == 2 {
		if kv, err := readKV(filepath.Join(at, "memory.events")); err == nil {
			if v, ok := kv["oom_kill"]; ok {
				c.OOMKills = int64(v)
			}
		}
	} else if kv, err := readKV(filepath.Join(at, "memory.oom_control")); err == nil {
		if v, ok := kv["oom_kill"]; ok {
			c.OOMKills = int64(v)
		}
	}
	if kv, err := readKV(filepath.Join(dir, "memory.stat")); err == nil {
		c.Stat = kv
	}
	return c, nil
}

func readLimit(p string) (uint64, bool) {
	b, err := os.ReadFile(p)
	if err != nil {
		return 0, false
	}
	s := strings.TrimSpace(string(b))
	if s == "max" {
		return 0, false
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil || v >= noLimit {
		return 0, false
	}
	return v, true
}

func readUint(p string) (uint64, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
}

// readKV reads "key value" lines (memory.stat, memory.events).
func readKV(p string) (map[string]uint64, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	out := map[string]uint64{}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) != 2 {
			continue
		}
		if v, err := strconv.ParseUint(f[1], 10, 64); err == nil {
			out[f[0]] = v
		}
	}
	return out, nil
}

// cgroupMount is a cgroup hierarchy mounted in this process's namespace.
type cgroupMount struct {
	root, point string // the hierarchy path mounted, and where
	version     int
	memory      bool // v1: the memory controller's hierarchy
}

func parseCgroupMounts(mountinfo []byte) []cgroupMount {
	var out []cgroupMount
	sc := bufio.NewScanner(bytes.NewReader(mountinfo))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		// id parent major:minor root point options [optional...] - fstype source superoptions
		f := strings.Fields(sc.Text())
		sep := -1
		for i, x := range f {
			if x == "-" {
				sep = i
				break
			}
		}
		if sep < 5 || sep+3 > len(f) {
			continue
		}
		fstype := f[sep+1]
		m := cgroupMount{root: unescapeMount(f[3]), point: unescapeMount(f[4])}
		switch fstype {
		case "cgroup2":
			m.version = 2
		case "cgroup":
			m.version = 1
			for _, o := range strings.Split(f[len(f)-1], ",") {
				if o == "memory" {
					m.memory = true
				}
			}
			if !m.memory {
				continue
			}
		default:
			continue
		}
		out = append(out, m)
	}
	return out
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// MemoryCgroupDir finds the directory of a process's memory cgroup from
// its /proc/PID/cgroup and the reader's /proc/self/mountinfo: the v2
// hierarchy when its memory controller is enabled there, else the v1
// memory hierarchy.
func MemoryCgroupDir(cgroup, mountinfo []byte) (dir string, version int, err error) {
	mounts := parseCgroupMounts(mountinfo)
	var v1, v2 string
	haveV1, haveV2 := false, false
	for _, l := range strings.Split(string(cgroup), "\n") {
		// hierarchy-id:controllers:path
		f := strings.SplitN(l, ":", 3)
		if len(f) != 3 {
			continue
		}
		if f[0] == "0" && f[1] == "" {
			v2, haveV2 = f[2], true
			continue
		}
		for _, c := range strings.Split(f[1], ",") {
			if c == "memory" {
				v1, haveV1 = f[2], true
			}
		}
	}
	if haveV2 {
		for _, m := range mounts {
			if m.version != 2 {
				continue
			}
			d, ok := under(m, v2)
			if !ok {
				continue
			}
			if _, err := os.Stat(filepath.Join(d, "memory.current")); err == nil {
				return d, 2, nil
			}
			if d == m.point {
				// The root cgroup has no memory.current; it has the
				// controller when its cgroup.controllers lists it.
				if b, err := os.ReadFile(filepath.Join(d, "cgroup.controllers")); err == nil && hasWord(string(b), "memory") && !haveV1 {
					return d, 2, nil
				}
			}
		}
	}
	if haveV1 {
		for _, m := range mounts {
			if m.version != 1 || !m.memory {
				continue
			}
			if d, ok := under(m, v1); ok {
				return d, 1, nil
			}
		}
	}
	return "", 0, ErrNoMemoryCgroup
}

// under maps a cgroup path onto the mount m (the path must be inside the
// mounted root).
func under(m cgroupMount, p string) (string, bool) {
	p = path.Clean("/" + p)
	root := path.Clean("/" + m.root)
	if root != "/" {
		if p != root && !strings.HasPrefix(p, root+"/") {
			return "", false
		}
		p = strings.TrimPrefix(p, root)
	}
	return filepath.Join(m.point, p), true
}

// cgroupRoot is the mount point that holds dir.
func cgroupRoot(dir string, mountinfo []byte) string {
	best := "/"
	for _, m := range parseCgroupMounts(mountinfo) {
		if (dir == m.point || strings.HasPrefix(dir, m.point+"/")) && len(m.point) > len(best) {
			best = m.point
		}
	}
	return best
}

func hasWord(s, w string) bool {
	for _, x := range strings.Fields(s) {
		if x == w {
			return true
		}
	}
	return false
}
