package procfs

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

func TestParseSmaps(t *testing.T) {
	es := ParseSmaps([]byte(`55bf7f654000-55bf7f7e4000 rw-p 00000000 00:00 0                          [heap]
Size:               1600 kB
KernelPageSize:        4 kB
Rss:                1448 kB
Pss:                1400 kB
Shared_Clean:          8 kB
Shared_Dirty:          0 kB
Private_Clean:        40 kB
Private_Dirty:      1400 kB
Anonymous:          1448 kB
Swap:                 12 kB
VmFlags: rd wr mr mw me ac
7fec595a0000-7fec5962f000 rw-s 00001000 00:01 2051                       /memfd:doublemapper (deleted)
Rss:                 432 kB
VmFlags: rd wr sh mr mw me ms
`))
	if len(es) != 2 {
		t.Fatalf("%d entries", len(es))
	}
	e := es[0]
	if e.Start != 0x55bf7f654000 || e.Path != "[heap]" || e.Rss != 1448<<10 || e.Pss != 1400<<10 || e.SharedClean != 8<<10 ||
		e.PrivateClean != 40<<10 || e.PrivateDirty != 1400<<10 || e.Anonymous != 1448<<10 || e.Swap != 12<<10 || !e.HasFlag("ac") || e.HasFlag("dd") {
		t.Errorf("%+v", e)
	}
	if e := es[1]; e.Path != "/memfd:doublemapper (deleted)" || e.Rss != 432<<10 || e.Perms != "rw-s" || e.Size() != 0x8f000 || !e.HasFlag("sh") {
		t.Errorf("%+v", e)
	}
	self, err := Smaps(os.Getpid())
	if err != nil || len(self) == 0 {
		t.Fatalf("own smaps: %d, %v", len(self), err)
	}
}

func TestParseSyscallSP(t *testing.T) {
	for s, want := range map[string]uint64{
		"202 0x7f0c 0x80 0x0 0x0 0x0 0x0 0x7ffd3a1c8e50 0x7f0c0b2e3f6a\n": 0x7ffd3a1c8e50,
		"-1 0x7ffd3a1c8e50 0x7f0c0b2e3f6a\n":                              0x7ffd3a1c8e50,
		"running\n":                                                       0,
	} {
		got, ok := ParseSyscallSP(s)
		if got != want || ok != (want != 0) {
			t.Errorf("%q: %#x %v, want %#x", s, got, ok, want)
		}
	}
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCgroupMemoryV2: the limit that applies is the smallest on the way
// up (here the parent's), usage and OOM kills are that cgroup's.
func TestCgroupMemoryV2(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "cgroup.controllers"), "cpu memory pids\n")
	write(t, filepath.Join(root, "app", "memory.max"), "536870912\n")
	write(t, filepath.Join(root, "app", "memory.current"), "400000000\n")
	write(t, filepath.Join(root, "app", "memory.events"), "low 0\nhigh 0\nmax 4\noom 2\noom_kill 1\n")
	leaf := filepath.Join(root, "app", "web")
	write(t, filepath.Join(leaf, "memory.max"), "max\n")
	write(t, filepath.Join(leaf, "memory.current"), "300000000\n")
	write(t, filepath.Join(leaf, "memory.stat"), "anon 200000000\nfile 90000000\n")
	mi := "30 23 0:26 / " + root + " rw,nosuid - cgroup2 cgroup2 rw\n"
	dir, v, err := MemoryCgroupDir([]byte("0::/app/web\n"), []byte(mi))
	if err != nil || dir != leaf || v != 2 {
		t.Fatalf("%s v%d %v", dir, v, err)
	}
	c, err := ReadCgroupMemoryDir(dir, v, cgroupRoot(dir, []byte(mi)))
	if err != nil {
		t.Fatal(err)
	}
	if c.Limit != 536870912 || c.LimitDir != filepath.Join(root, "app") || c.Usage != 400000000 || c.OOMKills != 1 ||
		c.Headroom() != 536870912-400000000 || c.Stat["anon"] != 200000000 {
		t.Errorf("%+v", c)
	}
}

// TestCgroupMemoryV1: a hybrid host (v2 mounted without the memory
// controller): the v1 memory hierarchy, mounted from a root that is not
// "/", "no limit" as v1 writes it.
func TestCgroupMemoryV1(t *testing.T) {
	base := t.TempDir()
	v2 := filepath.Join(base, "unified")
	write(t, filepath.Join(v2, "cgroup.controllers"), "\n")
	mem := filepath.Join(base, "memory")
	leaf := filepath.Join(mem, "job")
	write(t, filepath.Join(leaf, "memory.limit_in_bytes"), strconv.FormatUint(9223372036854771712, 10)+"\n")
	write(t, filepath.Join(leaf, "memory.usage_in_bytes"), "123456\n")
	write(t, filepath.Join(leaf, "memory.oom_control"), "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n")
	mi := "41 31 0:38 / " + v2 + " rw,relatime - cgroup2 cgroup2 rw\n" +
		"35 31 0:32 /docker/abc " + mem + " rw,relatime - cgroup cgroup rw,memory\n"
	dir, v, err := MemoryCgroupDir([]byte("4:memory:/docker/abc/job\n0::/\n"), []byte(mi))
	if err != nil || dir != leaf || v != 1 {
		t.Fatalf("%s v%d %v", dir, v, err)
	}
	c, err := ReadCgroupMemoryDir(dir, v, cgroupRoot(dir, []byte(mi)))
	if err != nil {
		t.Fatal(err)
	}
	if c.Limit != 0 || c.LimitDir != "" || c.Usage != 123456 || c.OOMKills != 3 || c.Headroom() != 0 {
		t.Errorf("%+v", c)
	}
	if _, _, err := MemoryCgroupDir([]byte("0::/\n"), []byte("1 0 8:1 / / rw - ext4 /dev/sda rw\n")); err != ErrNoMemoryCgroup {
		t.Errorf("no cgroup mounts: %v", err)
	}
}
