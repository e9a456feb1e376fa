package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/clrspy/clrspy/capture"
	"github.com/clrspy/clrspy/internal/procfs"
	"github.com/clrspy/clrspy/internal/workload"
	"github.com/clrspy/clrspy/triage"
)

const mib = 1 << 20

// leakLine waits for the nativeleak workload's n-th stderr line starting
// with prefix ("done info hglobal=B malloc=B ...") and parses its k=v
// fields.
func leakLine(t *testing.T, p *workload.Proc, prefix string, n int) map[string]float64 {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		seen := 0
		for _, l := range strings.Split(p.Stderr(), "\n") {
			if !strings.HasPrefix(l, prefix) {
				continue
			}
			if seen++; seen == n {
				c := map[string]float64{}
				for _, f := range strings.Fields(l) {
					if k, v, ok := strings.Cut(f, "="); ok {
						c[k], _ = strconv.ParseFloat(v, 64)
					}
				}
				return c
			}
		}
		if p.Exited() {
			t.Fatalf("the workload exited before %q #%d: %s", prefix, n, p.Stderr())
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no %q #%d within 60 s: %s", prefix, n, p.Stderr())
	return nil
}

// freshSplit waits for a memory sample of pid read after now.
func freshSplit(t *testing.T, d *Daemon, pid string) {
	t.Helper()
	after := int64(time.Since(memEpoch))
	waitFor(t, 20*time.Second, "a memory sample", func() bool {
		mt, ok := exported(d, pid)
		return ok && len(mt.Memory) > 0 && mt.Memory[len(mt.Memory)-1].AtNs > after
	})
}

// memMetrics scrapes /metrics: the memory families' values of pid, by
// kind for clrspy_process_memory_bytes and by family for the cgroup's.
func memMetrics(t *testing.T, d *Daemon, pid string) map[string]float64 {
	t.Helper()
	h, err := d.Handler(HandlerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	body := get(t, h, "/metrics").Body.Bytes()
	parser := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for name, f := range fams {
		if !strings.HasPrefix(name, "clrspy_process_memory") && !strings.HasPrefix(name, "clrspy_cgroup_memory") {
			continue
		}
		for _, m := range f.Metric {
			key, mine := name, false
			for _, l := range m.Label {
				switch l.GetName() {
				case "pid":
					mine = l.GetValue() == pid
				case "kind":
					key = l.GetValue()
				}
			}
			if !mine {
				continue
			}
			if m.Gauge != nil {
				out[key] = m.Gauge.GetValue()
			} else if m.Counter != nil {
				out[key] = m.Counter.GetValue()
			}
		}
	}
	return out
}

// rollupRss is the process's RSS by smaps_rollup.
func rollupRss(t *testing.T, pid int) float64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[0] == "Rss:" {
			v, _ := strconv.ParseFloat(f[1], 64)
			return v * 1024
		}
	}
	t.Fatalf("no Rss in smaps_rollup: %s", b)
	return 0
}

func fileUint(t *testing.T, p string) float64 {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64)
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	return v
}

// TestMemoryMetrics: serve's clrspy_process_memory_bytes and cgroup
// families on the nativeleak workload (a 32 MiB managed heap) started in a
// cgroup with a 400 MiB limit, its split read every 300 ms.
//
// Idle, the kinds add up to the RSS smaps_rollup gives right after the
// scrape within 1 MiB (the process idles: only the runtime's own threads
// touch a page now and then). The limit is the cgroup's memory.max; the
// usage lies between the cgroup's memory.current read before and after
// the sample, 1 MiB either way (page cache, kernel memory); the headroom
// is the limit less that usage exactly. Leaking 48 MiB (32 MiB through
// AllocHGlobal, 16 MiB through malloc, 16 KB blocks), the native heap
// grows by the workload's count within 5 % (glibc's chunk headers and top
// pad; TestMemoryLiveNativeLeak measures 0.09 %), the GC heap by less than
// 2 MiB.
func TestMemoryMetrics(t *testing.T) {
	dir := t.TempDir()
	path, name := alias(t, dir)
	cg, limitFile, usageFile := makeCgroup(t, 400*mib)
	d, _ := run(t, Config{Names: []string{name}, MemoryInterval: 300 * time.Millisecond})
	sh := exec.Command("/bin/sh", "-c", `echo $$ > "$0/cgroup.procs" && exec "$@"`, cg, path, "nativeleak", "managedMB=32")
	p := workload.StartCmd(t, sh, nil)
	t.Cleanup(func() {
		p.Stdin("exit\n")
		p.Wait(30 * time.Second)
	})
	pid := strconv.Itoa(p.Pid)
	waitFor(t, 30*time.Second, "session open", func() bool { ti, _ := info(d, pid); return ti.State == "running" })
	p.Stdin("info\n")
	before := leakLine(t, p, "done info", 1)
	lo := fileUint(t, filepath.Join(cg, usageFile))
	freshSplit(t, d, pid)
	hi := fileUint(t, filepath.Join(cg, usageFile))
	m0 := memMetrics(t, d, pid)
	rss := rollupRss(t, p.Pid)
	var sum float64
	for _, k := range []string{"gc_heap", "gc_bookkeeping", "jit_code", "loader", "native_heap", "stacks", "images", "other"} {
		v, ok := m0[k]
		if !ok {
			t.Errorf("no clrspy_process_memory_bytes{kind=%q}", k)
		}
		sum += v
	}
	t.Logf("split %v; smaps_rollup Rss %.0f", m0, rss)
	if math.Abs(sum-rss) > mib {
		t.Errorf("the kinds add up to %.0f, smaps_rollup's Rss is %.0f: more than 1 MiB apart", sum, rss)
	}
	limit := fileUint(t, filepath.Join(cg, limitFile))
	if m0["clrspy_cgroup_memory_limit_bytes"] != limit || limit != 400*mib {
		t.Errorf("limit %.0f, the cgroup's %s says %.0f", m0["clrspy_cgroup_memory_limit_bytes"], limitFile, limit)
	}
	usage := m0["clrspy_cgroup_memory_usage_bytes"]
	if usage+mib < lo || usage > hi+mib {
		t.Errorf("usage %.0f, the cgroup's %s read %.0f before and %.0f after", usage, usageFile, lo, hi)
	}
	if m0["clrspy_cgroup_memory_headroom_bytes"] != limit-usage {
		t.Errorf("headroom %.0f, want limit %.0f less usage %.0f", m0["clrspy_cgroup_memory_headroom_bytes"], limit, usage)
	}
	if v, ok := m0["clrspy_cgroup_memory_oom_kills_total"]; !ok || v != 0 {
		t.Errorf("OOM kills %v (%v), want 0", v, ok)
	}

	// The cost of one read (docs/memory.md): smaps, the threads' stack
	// pointers, the cgroup, the split; beside smaps_rollup alone.
	const reads = 20
	var ru0, ru1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	t0 := time.Now()
	for i := 0; i < reads; i++ {
		if _, _, err := capture.ReadMemory(p.Pid, memEpoch); err != nil {
			t.Fatal(err)
		}
	}
	wall := time.Since(t0) / reads
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	t1 := time.Now()
	for i := 0; i < reads; i++ {
		rollupRss(t, p.Pid)
	}
	es, _ := procfs.Smaps(p.Pid)
	t.Logf("one read: %.2f ms wall, %.2f ms CPU (clrspy, its sessions included) for %d mappings; smaps_rollup alone %.2f ms", float64(wall)/1e6,
		float64(ru1.Utime.Nano()+ru1.Stime.Nano()-ru0.Utime.Nano()-ru0.Stime.Nano())/1e6/reads, len(es), float64(time.Since(t1)/reads)/1e6)

	p.Stdin("hglobal 32768\nmalloc 16384\ninfo\n")
	after := leakLine(t, p, "done info", 2)
	freshSplit(t, d, pid)
	m1 := memMetrics(t, d, pid)
	leaked := after["hglobal"] - before["hglobal"] + after["malloc"] - before["malloc"]
	if leaked != 48*mib {
		t.Fatalf("the workload leaked %.0f bytes, want 48 MiB", leaked)
	}
	grew := m1["native_heap"] - m0["native_heap"]
	t.Logf("native heap +%.2f MiB for %.2f MiB leaked; GC heap %+.2f MiB", grew/mib, leaked/mib, (m1["gc_heap"]-m0["gc_heap"])/mib)
	if math.Abs(grew-leaked) > 0.05*leaked {
		t.Errorf("native heap grew %.2f MiB, the workload leaked %.2f MiB: more than 5 %% apart", grew/mib, leaked/mib)
	}
	if g := m1["gc_heap"] - m0["gc_heap"]; math.Abs(g) > 2*mib {
		t.Errorf("GC heap changed %.2f MiB with no managed allocation", g/mib)
	}
}

// TestMemoryTriage: /triage over a window in which the nativeleak
// workload leaks 64 MiB of native memory (AllocHGlobal) is a critical
// memory finding from the split, in clrspy memory's words (the native
// heap grows while the GC heap is flat), its next command clrspy memory;
// a second window with no leak has no memory finding above info.
//
// The leak happens within the 4 s window: 64 MiB in under 4 s is at
// least 960 MB/min, eight times the critical 120 MB/min, however the
// machine's load stretches the workload's steps.
func TestMemoryTriage(t *testing.T) {
	dir := t.TempDir()
	path, name := alias(t, dir)
	d, _ := run(t, Config{Names: []string{name}, MemoryInterval: time.Second})
	h, err := d.Handler(HandlerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p := startAs(t, path, nil, "nativeleak", "managedMB=16")
	t.Cleanup(func() {
		p.Stdin("exit\n")
		p.Wait(30 * time.Second)
	})
	pid := strconv.Itoa(p.Pid)
	waitFor(t, 30*time.Second, "session open", func() bool { ti, _ := info(d, pid); return ti.State == "running" })
	p.Stdin("info\n")
	leakLine(t, p, "done info", 1)
	judge := func(leak bool) []triage.Finding {
		done := make(chan []byte, 1)
		go func() { done <- get(t, h, "/triage?pid="+pid+"&seconds=4").Body.Bytes() }()
		if leak {
			time.Sleep(500 * time.Millisecond)
			p.Stdin("hglobal 65536\ninfo\n")
		}
		var doc struct {
			Findings []triage.Finding `json:"findings"`
		}
		b := <-done
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%v: %s", err, b)
		}
		var mem []triage.Finding
		for _, f := range doc.Findings {
			if f.Area == triage.AreaMemory {
				mem = append(mem, f)
			}
		}
		return mem
	}
	fs := judge(true)
	leakLine(t, p, "done info", 2) // the leak was done within the window
	if len(fs) != 1 || fs[0].Severity != triage.Critical || fs[0].Rule != "memory.resident_growth_mb_per_min" ||
		!strings.Contains(fs[0].Title, ": native heap grows ") || !strings.HasSuffix(fs[0].Title, " while the GC heap is flat") ||
		fs[0].Next != "clrspy memory --pid "+pid+" --duration 60s" || fs[0].Evidence["growing_kind"] != "native_heap" {
		t.Errorf("leaking: memory findings %+v, want one critical native heap growth", fs)
	}
	if g, _ := fs[0].Evidence["growing_delta_mb"].(float64); len(fs) == 1 && math.Abs(g-64) > 0.05*64 {
		t.Errorf("native heap grew %.2f MB in the window, the workload leaked 64 MiB", g)
	}
	calm := judge(false)
	if len(calm) != 1 || calm[0].Severity != triage.Info || !strings.HasPrefix(calm[0].Title, "memory steady: ") {
		t.Errorf("calm: memory findings %+v, want one info", calm)
	}
}

// makeCgroup makes a child of this process's memory cgroup with the limit
// (v2, else v1) and removes it when the test ends (its processes must have
// exited by then: the cleanups registered after it run first).
func makeCgroup(t *testing.T, limit uint64) (dir, limitFile, usageFile string) {
	t.Helper()
	own, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	var v1, v2 string
	for _, l := range strings.Split(string(own), "\n") {
		f := strings.SplitN(l, ":", 3)
		if len(f) != 3 {
			continue
		}
		if f[0] == "0" && f[1] == "" {
			v2 = f[2]
		}
		for _, c := range strings.Split(f[1], ",") {
			if c == "memory" {
				v1 = f[2]
			}
		}
	}
	name := fmt.Sprintf("clrspy-servetest-%d-%d", os.Getpid(), time.Now().UnixNano()%1e6)
	var tried []string
	try := func(base, lf, uf string) bool {
		d := filepath.Join(base, name)
		if err := os.Mkdir(d, 0o755); err != nil {
			tried = append(tried, err.Error())
			return false
		}
		if err := os.WriteFile(filepath.Join(d, lf), []byte(strconv.FormatUint(limit, 10)), 0o644); err != nil {
			tried = append(tried, err.Error())
			os.Remove(d)
			return false
		}
		t.Cleanup(func() {
			for i := 0; i < 50 && os.Remove(d) != nil; i++ {
				time.Sleep(100 * time.Millisecond)
			}
		})
		dir, limitFile, usageFile = d, lf, uf
		return true
	}
	if v2 != "" {
		for _, mount := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified"} {
			if _, err := os.Stat(filepath.Join(mount, "cgroup.controllers")); err != nil {
				continue
			}
			base := filepath.Join(mount, v2)
			os.WriteFile(filepath.Join(base, "cgroup.subtree_control"), []byte("+memory"), 0o644)
			if b, _ := os.ReadFile(filepath.Join(base, "cgroup.subtree_control")); !strings.Contains(string(b), "memory") {
				tried = append(tried, base+": the memory controller is not enabled for its children")
				continue
			}
			if try(base, "memory.max", "memory.current") {
				return
			}
		}
	}
	if v1 != "" && try(filepath.Join("/sys/fs/cgroup/memory", v1), "memory.limit_in_bytes", "memory.usage_in_bytes") {
		return
	}
	t.Fatalf("cannot make a memory cgroup for the test (root and a writable cgroup v2 with the memory controller, or a v1 memory hierarchy): %s", strings.Join(tried, "; "))
	return
}

// TestMemNear: a target's memory counts as unmoved within 1/memSame of the
// last smaps reading's pages, either way.
func TestMemNear(t *testing.T) {
	for _, c := range []struct {
		a, b uint64
		want bool
	}{{25600, 25600, true}, {25700, 25600, true}, {25500, 25600, true}, {25701, 25600, false}, {25499, 25600, false}, {1, 0, false}} {
		if got := near(c.a, c.b); got != c.want {
			t.Errorf("near(%d, %d) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}
