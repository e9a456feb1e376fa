package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clrspy/clrspy/internal/workload"
)

// memoryDoc is the part of `clrspy memory --json` the tests read.
type memoryDoc struct {
	Pid      int    `json:"pid"`
	Complete bool   `json:"complete"`
	RssBytes uint64 `json:"rss_bytes"`
	PssBytes uint64 `json:"pss_bytes"`
	UssBytes uint64 `json:"uss_bytes"`
	Parts    []struct {
		Kind     string `json:"kind"`
		Bytes    uint64 `json:"bytes"`
		PssBytes uint64 `json:"pss_bytes"`
		UssBytes uint64 `json:"uss_bytes"`
	} `json:"parts"`
	Images []struct {
		Path  string `json:"path"`
		Bytes uint64 `json:"bytes"`
	} `json:"images"`
	GCRange *struct {
		Start   string `json:"start"`
		End     string `json:"end"`
		FoundBy string `json:"found_by"`
	} `json:"gc_range"`
	Cgroup *struct {
		Version       int     `json:"version"`
		Path          string  `json:"path"`
		LimitPath     *string `json:"limit_path"`
		LimitBytes    *uint64 `json:"limit_bytes"`
		UsageBytes    uint64  `json:"usage_bytes"`
		HeadroomBytes *uint64 `json:"headroom_bytes"`
		OOMKills      *int64  `json:"oom_kills"`
	} `json:"cgroup"`
	Timeline []struct {
		AtMs             float64 `json:"at_ms"`
		RssBytes         uint64  `json:"rss_bytes"`
		CgroupUsageBytes *uint64 `json:"cgroup_usage_bytes"`
		Parts            []struct {
			Kind  string `json:"kind"`
			Bytes uint64 `json:"bytes"`
		} `json:"parts"`
	} `json:"timeline"`
	Growth []struct {
		Kind        string  `json:"kind"`
		DeltaBytes  int64   `json:"delta_bytes"`
		BytesPerSec float64 `json:"bytes_per_sec"`
	} `json:"growth"`
	Judgement string `json:"judgement"`
	Runtime   *struct {
		GCHeapSizeBytes  *float64 `json:"gc_heap_size_bytes"`
		GCCommittedBytes *float64 `json:"gc_committed_bytes"`
		HeapAddresses    int      `json:"heap_addresses"`
	} `json:"runtime"`
}

func (d *memoryDoc) part(kind string) uint64 {
	for _, p := range d.Parts {
		if p.Kind == kind {
			return p.Bytes
		}
	}
	return 0
}

func (d *memoryDoc) growth(kind string) (int64, float64) {
	for _, g := range d.Growth {
		if g.Kind == kind {
			return g.DeltaBytes, g.BytesPerSec
		}
	}
	return 0, 0
}

// checkSum: the parts add up to RSS, PSS and USS exactly, each kind
// once, USS <= PSS <= RSS.
func (d *memoryDoc) checkSum(t *testing.T) {
	t.Helper()
	var rss, pss, uss uint64
	seen := map[string]bool{}
	for _, p := range d.Parts {
		rss += p.Bytes
		pss += p.PssBytes
		uss += p.UssBytes
		seen[p.Kind] = true
	}
	if rss != d.RssBytes || pss != d.PssBytes || uss != d.UssBytes {
		t.Errorf("parts add up to RSS %d, PSS %d, USS %d; the document says %d, %d, %d", rss, pss, uss, d.RssBytes, d.PssBytes, d.UssBytes)
	}
	if !(d.UssBytes <= d.PssBytes && d.PssBytes <= d.RssBytes) || d.UssBytes == 0 {
		t.Errorf("USS %d, PSS %d, RSS %d: want 0 < USS <= PSS <= RSS", d.UssBytes, d.PssBytes, d.RssBytes)
	}
	for _, k := range []string{"gc_heap", "gc_bookkeeping", "jit_code", "loader", "native_heap", "stacks", "images", "other"} {
		if !seen[k] {
			t.Errorf("no part %s in %+v", k, d.Parts)
		}
	}
	if len(d.Parts) != 8 {
		t.Errorf("%d parts, want 8", len(d.Parts))
	}
}

func memoryJSON(t *testing.T, args ...string) *memoryDoc {
	t.Helper()
	out := filepath.Join(t.TempDir(), "memory.json")
	_, stderr, err := runCaptured(t, append([]string{"memory", "--json", "-o", out}, args...)...)
	if err != nil {
		t.Fatalf("clrspy memory %v: %v\n%s", args, err, tail(stderr))
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var d memoryDoc
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	return &d
}

// leakCounts is one "done CMD k=v ..." line of the nativeleak workload.
type leakCounts map[string]float64

// awaitLine waits for the workload's n-th stderr line starting with prefix
// and parses its k=v fields.
func awaitLine(t *testing.T, p *workload.Proc, prefix string, n int) leakCounts {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		seen := 0
		for _, l := range strings.Split(p.Stderr(), "\n") {
			if !strings.HasPrefix(l, prefix) {
				continue
			}
			if seen++; seen == n {
				c := leakCounts{}
				for _, f := range strings.Fields(l) {
					if k, v, ok := strings.Cut(f, "="); ok {
						x, _ := strconv.ParseFloat(v, 64)
						c[k] = x
					}
				}
				return c
			}
		}
		if p.Exited() {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no line %d %q from the workload:\n%s", n, prefix, p.Stderr())
	return nil
}

const mib = 1 << 20

// TestMemoryLiveNativeLeak starts the nativeleak workload (a 32 MiB managed
// heap of 8 KB arrays), reads `clrspy memory`, has it leak 64 MiB through
// Marshal.AllocHGlobal and 32 MiB through a P/Invoke of malloc (16 KB
// blocks, every byte written), and reads again.
//
// The native heap grows by the workload's own count within 5 %: glibc's
// chunk header (16 bytes a 16 KB block, 0.1 %) and the heap's top pad
// (128 KB) are all that separate them; the GC heap stays within 1 MiB (no
// managed allocation but the blocks' list). The GC heap part is within 5 %
// of GC.GetTotalMemory(false) read at the same moment: its RSS is the
// objects plus the unused rest of the allocation contexts and of regions
// freed by the startup's gen0 GCs. And whatever the GC did, it is at least
// the live objects (heap size less fragmentation, all resident: no swap)
// and at most what the GC committed. The parts add up to RSS exactly.
func TestMemoryLiveNativeLeak(t *testing.T) {
	p := workload.Start(t, nil, "nativeleak", "managedMB=32")
	p.Stdin("info\n")
	before := awaitLine(t, p, "done info", 1)
	d0 := memoryJSON(t, "--pid", strconv.Itoa(p.Pid))
	p.Stdin("hglobal 65536\nmalloc 32768\ninfo\n")
	after := awaitLine(t, p, "done info", 2)
	d1 := memoryJSON(t, "--pid", strconv.Itoa(p.Pid))
	p.Stdin("exit\n")
	if _, err := p.Wait(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	d0.checkSum(t)
	d1.checkSum(t)
	if d0.Pid != p.Pid || !d0.Complete {
		t.Errorf("pid %d complete %v, want %d true", d0.Pid, d0.Complete, p.Pid)
	}

	leaked := (after["hglobal"] - before["hglobal"]) + (after["malloc"] - before["malloc"])
	if leaked != 96*mib {
		t.Fatalf("the workload leaked %.0f bytes, want 96 MiB", leaked)
	}
	grew := float64(d1.part("native_heap")) - float64(d0.part("native_heap"))
	t.Logf("native heap %d -> %d: +%.2f MiB for %.2f MiB leaked (%.2f %%)", d0.part("native_heap"), d1.part("native_heap"),
		grew/mib, leaked/mib, 100*(grew-leaked)/leaked)
	if math.Abs(grew-leaked) > 0.05*leaked {
		t.Errorf("native heap grew %.2f MiB, the workload leaked %.2f MiB: more than 5 %% apart", grew/mib, leaked/mib)
	}
	if dgc := math.Abs(float64(d1.part("gc_heap")) - float64(d0.part("gc_heap"))); dgc > mib {
		t.Errorf("GC heap changed %.2f MiB while only native memory was leaked", dgc/mib)
	}
	if dr := float64(d1.RssBytes) - float64(d0.RssBytes); dr < leaked {
		t.Errorf("RSS grew %.2f MiB, less than the %.2f MiB leaked and written", dr/mib, leaked/mib)
	}

	gc := float64(d0.part("gc_heap"))
	t.Logf("GC heap part %.2f MiB; runtime: total %.2f MiB, heap size %.2f, fragmented %.2f, committed %.2f",
		gc/mib, before["total"]/mib, before["heapSize"]/mib, before["fragmented"]/mib, before["committed"]/mib)
	if math.Abs(gc-before["total"]) > 0.05*before["total"] {
		t.Errorf("GC heap part %.2f MiB, GC.GetTotalMemory %.2f MiB: more than 5 %% apart", gc/mib, before["total"]/mib)
	}
	if live := before["heapSize"] - before["fragmented"]; gc < live {
		t.Errorf("GC heap part %.2f MiB is less than the live objects, %.2f MiB", gc/mib, live/mib)
	}
	// Committed is as of the last GC; gen0 may have taken regions since,
	// at most what was allocated since (total less heap size).
	if hi := before["committed"] + math.Max(0, before["total"]-before["heapSize"]) + mib; gc > hi {
		t.Errorf("GC heap part %.2f MiB is more than the GC committed, %.2f MiB", gc/mib, hi/mib)
	}
	if d0.GCRange == nil {
		t.Fatal("no GC range found")
	}
	// The runtime's own counters, read by clrspy's session beside the
	// sample: committed is the same GC.GetGCMemoryInfo figure (no GC ran
	// between: the workload idles), the heap size GC.GetTotalMemory's.
	r := d0.Runtime
	if r == nil || r.GCCommittedBytes == nil || r.GCHeapSizeBytes == nil {
		t.Fatalf("no runtime counters in the report: %+v", r)
	}
	if math.Abs(*r.GCCommittedBytes-before["committed"]) > 0.01*before["committed"] {
		t.Errorf("runtime section: committed %.0f, the workload's GC.GetGCMemoryInfo %.0f", *r.GCCommittedBytes, before["committed"])
	}
	if math.Abs(*r.GCHeapSizeBytes-before["total"]) > 0.05*before["total"] {
		t.Errorf("runtime section: GC heap size %.0f, the workload's GC.GetTotalMemory %.0f", *r.GCHeapSizeBytes, before["total"])
	}
	for _, k := range []string{"jit_code", "loader", "stacks", "images"} {
		if d0.part(k) == 0 {
			t.Errorf("part %s is empty in a running .NET process", k)
		}
	}
	found := false
	for _, im := range d0.Images {
		if strings.HasSuffix(im.Path, "/libcoreclr.so") && im.Bytes > 0 {
			found = true
		}
	}
	if !found {
		t.Errorf("libcoreclr.so is not among the images: %+v", d0.Images)
	}
}

// TestMemoryLiveTimeline: `clrspy memory --duration 4s --interval 500ms`
// on the nativeleak workload leaking 10 MiB a second (20 steps a second,
// each 256 KB through AllocHGlobal and 256 KB through malloc in 16 KB
// blocks; the managed heap kept before it begins). The timeline has a point per interval (at least 6 of the 9 on
// a loaded machine), each adding up to its RSS; the native heap's slope is
// the workload's rate within 10 %: the workload holds its rate to a step
// (512 KB of the 40 MiB leaked in the window), clrspy's own session adds
// its event buffers in the target (measured: +0.2 MiB/s over these 4 s,
// 2 %; 10.02 MiB/s with --runtime=false), the rest is margin for a loaded
// machine delaying a sample. The judgement names the native heap and says
// the GC heap is flat.
func TestMemoryLiveTimeline(t *testing.T) {
	p := workload.Start(t, nil, "nativeleak", "managedMB=16", "rateKBps=10240", "seconds=9")
	awaitLine(t, p, "leaking", 1)
	d := memoryJSON(t, "--pid", strconv.Itoa(p.Pid), "--duration", "4s", "--interval", "500ms")
	if _, err := p.Wait(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	d.checkSum(t)
	if len(d.Timeline) < 6 {
		t.Fatalf("%d timeline points in 4 s at 500 ms, want at least 6", len(d.Timeline))
	}
	for i, pt := range d.Timeline {
		var sum uint64
		for _, q := range pt.Parts {
			sum += q.Bytes
		}
		if sum != pt.RssBytes {
			t.Errorf("timeline point %d: parts add up to %d, RSS %d", i, sum, pt.RssBytes)
		}
	}
	_, rate := d.growth("native_heap")
	want := 10240.0 * 1024
	t.Logf("native heap slope %.2f MiB/s, the workload's rate %.2f MiB/s; judgement %q", rate/mib, want/mib, d.Judgement)
	if math.Abs(rate-want) > 0.10*want {
		t.Errorf("native heap grows %.2f MiB/s, the workload leaks %.2f MiB/s: more than 10 %% apart", rate/mib, want/mib)
	}
	if !strings.Contains(d.Judgement, "native heap grows") || !strings.Contains(d.Judgement, "while the GC heap is flat") {
		t.Errorf("judgement %q: want the native heap growing while the GC heap is flat", d.Judgement)
	}
}

// TestMemoryLiveCgroup makes a memory cgroup with a 300 MiB limit under
// the test's own (v2 when its memory controller can be enabled there, else
// the v1 memory hierarchy), starts the workload in it, and checks the limit, the cgroup and the headroom `clrspy memory` shows
// against the cgroup's files.
func TestMemoryLiveCgroup(t *testing.T) {
	dir, version, limitFile, usageFile := makeMemoryCgroup(t, 300*mib)
	// The shell joins the cgroup and becomes the workload: every page the
	// workload touches is charged there (v1 does not move charges with a
	// process that joins later), and the runtime sees the limit from its
	// start.
	sh := exec.Command("/bin/sh", "-c", `echo $$ > "$0/cgroup.procs" && exec "$@"`, dir, workload.Exe(t), "nativeleak", "managedMB=8")
	p := workload.StartCmd(t, sh, nil)
	t.Cleanup(func() {
		p.Stdin("exit\n")
		p.Wait(30 * time.Second)
	})
	p.Stdin("malloc 16384\ninfo\n")
	awaitLine(t, p, "done info", 1)
	lo := readUintFile(t, filepath.Join(dir, usageFile))
	d := memoryJSON(t, "--pid", strconv.Itoa(p.Pid))
	hi := readUintFile(t, filepath.Join(dir, usageFile))
	limit := readUintFile(t, filepath.Join(dir, limitFile))
	c := d.Cgroup
	if c == nil {
		t.Fatal("no cgroup in the report")
	}
	if c.Version != version || c.Path != dir {
		t.Errorf("cgroup v%d %s, want v%d %s", c.Version, c.Path, version, dir)
	}
	if c.LimitBytes == nil || *c.LimitBytes != limit || limit != 300*mib {
		t.Fatalf("limit %v, the cgroup's %s says %d (set to %d)", c.LimitBytes, limitFile, limit, 300*mib)
	}
	if *c.LimitPath != dir {
		t.Errorf("limit set at %s, want %s", *c.LimitPath, dir)
	}
	// The workload idles, but the page cache and kernel memory of the
	// cgroup may move between the reads: usage within the two reads
	// around clrspy's, 1 MiB either way.
	if c.UsageBytes+mib < lo || c.UsageBytes > hi+mib {
		t.Errorf("usage %d, the cgroup's %s read %d before and %d after", c.UsageBytes, usageFile, lo, hi)
	}
	if c.HeadroomBytes == nil || *c.HeadroomBytes != limit-c.UsageBytes {
		t.Errorf("headroom %v, want limit %d less usage %d", c.HeadroomBytes, limit, c.UsageBytes)
	}
	if anon := d.part("native_heap") + d.part("gc_heap"); c.UsageBytes < anon {
		t.Errorf("cgroup usage %d is less than the workload's native and GC heaps, %d: not its cgroup", c.UsageBytes, anon)
	}
	if c.OOMKills == nil || *c.OOMKills != 0 {
		t.Errorf("OOM kills %v, want 0", c.OOMKills)
	}
	pct := fmt.Sprintf("%.0f %% of the cgroup's memory limit", 100*float64(c.UsageBytes)/float64(limit))
	if !strings.Contains(d.Judgement, pct) {
		t.Errorf("judgement %q, want %q", d.Judgement, pct)
	}
}

func readUintFile(t *testing.T, p string) uint64 {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	return v
}

// makeMemoryCgroup makes a child of this process's memory cgroup with the
// limit and removes it when the test ends (the processes in it must have
// exited by then: the cleanups registered after it run first).
func makeMemoryCgroup(t *testing.T, limit uint64) (dir string, version int, limitFile, usageFile string) {
	t.Helper()
	own, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("clrspy-memtest-%d", os.Getpid())
	var tried []string
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
	try := func(base string, ver int, lf, uf string) bool {
		d := filepath.Join(base, name)
		if err := os.Mkdir(d, 0o755); err != nil && !os.IsExist(err) {
			tried = append(tried, err.Error())
			return false
		}
		if err := os.WriteFile(filepath.Join(d, lf), []byte(strconv.FormatUint(limit, 10)), 0o644); err != nil {
			tried = append(tried, fmt.Sprintf("%s: %v", filepath.Join(d, lf), err))
			os.Remove(d)
			return false
		}
		t.Cleanup(func() {
			for i := 0; i < 50; i++ {
				if os.Remove(d) == nil || os.IsNotExist(os.Remove(d)) {
					return
				}
				time.Sleep(100 * time.Millisecond)
			}
			t.Errorf("could not remove the test's cgroup %s", d)
		})
		dir, version, limitFile, usageFile = d, ver, lf, uf
		return true
	}
	for _, mount := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified"} {
		if v2 == "" {
			break
		}
		if _, err := os.Stat(filepath.Join(mount, "cgroup.controllers")); err != nil {
			continue
		}
		base := filepath.Join(mount, v2)
		os.WriteFile(filepath.Join(base, "cgroup.subtree_control"), []byte("+memory"), 0o644)
		if b, _ := os.ReadFile(filepath.Join(base, "cgroup.subtree_control")); !strings.Contains(string(b), "memory") {
			tried = append(tried, base+": the memory controller is not enabled for its children")
			continue
		}
		if try(base, 2, "memory.max", "memory.current") {
			return
		}
	}
	if v1 != "" && try(filepath.Join("/sys/fs/cgroup/memory", v1), 1, "memory.limit_in_bytes", "memory.usage_in_bytes") {
		return
	}
	t.Fatalf("cannot make a memory cgroup for the test (it needs root and a writable cgroup v2 with the memory controller, or a v1 memory hierarchy): %s", strings.Join(tried, "; "))
	return
}

// TestMemoryLiveLaunch: `clrspy memory --duration 10s -- Workload
// nativeleak rateKBps=4096 seconds=2`: the timeline ends when the program
// exits (well before 10 s), its output went to stderr (the report keeps
// stdout), and the native heap grew over the timeline by what the
// workload says it leaked: more than half of it (the first sample comes
// 250 ms after the start, the leak may have begun), no more than it and 3
// MiB (the first sample may also come before the runtime's own start-up
// mallocs and clrspy's session buffers: 0.4 MiB measured here). Exit
// status 3 of the program (exit=3) is clrspy's.
func TestMemoryLiveLaunch(t *testing.T) {
	out := filepath.Join(t.TempDir(), "memory.json")
	start := time.Now()
	_, stderr, err := runCaptured(t, append([]string{"memory", "--json", "-o", out, "--duration", "10s", "--interval", "250ms", "--"},
		workload.Argv(t, "nativeleak", "managedMB=8", "rateKBps=4096", "seconds=2", "exit=3")...)...)
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != 3 {
		t.Fatalf("clrspy memory: %v, want the program's exit status 3\n%s", err, tail(stderr))
	}
	if el := time.Since(start); el > 8*time.Second {
		t.Errorf("took %v: the timeline did not end with the program", el)
	}
	wl, err := workload.ParseResult(stderr)
	if err != nil {
		t.Fatalf("the workload's result is not on stderr: %v\n%s", err, tail(stderr))
	}
	leaked := float64(wl.Int("hglobalBytes") + wl.Int("mallocBytes"))
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var d memoryDoc
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	d.checkSum(t)
	if len(d.Timeline) < 2 {
		t.Fatalf("%d timeline points", len(d.Timeline))
	}
	grew, _ := d.growth("native_heap")
	t.Logf("native heap +%.2f MiB over the timeline, the workload leaked %.2f MiB in all", float64(grew)/mib, leaked/mib)
	if float64(grew) > leaked+3*mib || float64(grew) < leaked/2 {
		t.Errorf("native heap grew %d over the timeline, the workload leaked %.0f in all", grew, leaked)
	}
	if !strings.Contains(string(stderr), "exited: the timeline ends with it") {
		t.Errorf("no notice that the program exited:\n%s", tail(stderr))
	}
}

// TestMemoryLiveCgroupLeak: the nativeleak workload leaking 10 MiB/s in a
// cgroup limited to 400 MiB, under `clrspy memory --duration 3s`: every
// timeline point has the cgroup's usage, and the judgement says when the
// limit is reached at this rate: the headroom at the end over the usage's
// slope, which the test recomputes from the points (and which must be
// within a quarter of the headroom over the workload's rate: the cgroup
// charges the leak and little else while the workload only leaks).
func TestMemoryLiveCgroupLeak(t *testing.T) {
	dir, _, _, _ := makeMemoryCgroup(t, 400*mib)
	sh := exec.Command("/bin/sh", "-c", `echo $$ > "$0/cgroup.procs" && exec "$@"`, dir, workload.Exe(t), "nativeleak", "managedMB=8", "rateKBps=10240", "seconds=8")
	p := workload.StartCmd(t, sh, nil)
	awaitLine(t, p, "leaking", 1)
	d := memoryJSON(t, "--pid", strconv.Itoa(p.Pid), "--duration", "3s", "--interval", "500ms")
	if _, err := p.Wait(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	if len(d.Timeline) < 4 || d.Cgroup == nil || d.Cgroup.LimitBytes == nil {
		t.Fatalf("%d points, cgroup %+v", len(d.Timeline), d.Cgroup)
	}
	var n, sx, sy, sxx, sxy float64
	for i, pt := range d.Timeline {
		if pt.CgroupUsageBytes == nil {
			t.Fatalf("timeline point %d has no cgroup usage", i)
		}
		x, y := pt.AtMs/1000, float64(*pt.CgroupUsageBytes)
		n++
		sx += x
		sy += y
		sxx += x * x
		sxy += x * y
	}
	rate := (n*sxy - sx*sy) / (n*sxx - sx*sx)
	last := float64(*d.Timeline[len(d.Timeline)-1].CgroupUsageBytes)
	eta := (400*mib - last) / rate
	t.Logf("usage slope %.2f MiB/s, %.1f MiB left: the limit in %.1f s; judgement %q", rate/mib, (400*mib-last)/mib, eta, d.Judgement)
	// The judgement rounds to a second (the test's float sums may differ
	// in the last bit, so one second either way).
	var said float64
	if i := strings.Index(d.Judgement, "reached in "); i < 0 {
		t.Fatalf("judgement %q says nothing of when the limit is reached", d.Judgement)
	} else if _, err := fmt.Sscanf(d.Judgement[i:], "reached in %g s at this rate", &said); err != nil || math.Abs(said-eta) > 1 {
		t.Errorf("judgement %q, want the limit reached in %.0f s", d.Judgement, eta)
	}
	if byRate := (400*mib - last) / (10 * mib); math.Abs(eta-byRate) > byRate/4 {
		t.Errorf("limit reached in %.1f s by the usage's slope, %.1f s by the workload's rate", eta, byRate)
	}
}
