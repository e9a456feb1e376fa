package main

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/clrspy/clrspy/internal/workload"
)

type nativeDoc struct {
	Native *struct {
		SampleBytes int64         `json:"sample_bytes"`
		Outstanding []nativeStack `json:"outstanding"`
		Allocated   []nativeStack `json:"allocated"`
	} `json:"native"`
}

type nativeStack struct {
	Frames []string `json:"frames"`
	Bytes  int64    `json:"bytes"`
	Count  int64    `json:"count"`
}

func (s *nativeStack) names(method string) bool {
	for _, f := range s.Frames {
		if strings.Contains(f, method) {
			return true
		}
	}
	return false
}

// countPerfFDs counts this process's perf_event descriptors.
func countPerfFDs() int {
	ents, _ := os.ReadDir("/proc/self/fd")
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && l == "anon_inode:[perf_event]" {
			n++
		}
	}
	return n
}

// TestMemoryLiveNativeStacks attaches `clrspy memory --native` to the
// nativeleak workload, then has it leak 64 MiB through
// Marshal.AllocHGlobal in NativeLeak.LeakHGlobal and 32 MiB through a
// P/Invoke of libc's malloc in NativeLeak.LeakMalloc, 16 KiB blocks,
// never freed. The two largest outstanding stacks name the two methods
// (the first also NativeMemory.Alloc, the P/Invoke the JIT inlined
// Marshal.AllocHGlobal into; libSystem.Native's SystemNative_Malloc
// tail-calls malloc, so no frame of its own; both with malloc as the leaf),
// and their bytes are within 10 % of what was leaked.
//
// The sampling error: with --sample-rate R = 16 KiB, a 16 KiB block is
// sampled with p = 1 - e^-1 = 0.632, independently of the others (the
// sampled points are a Poisson process over the bytes), and stands for
// 16 KiB / p. Over N blocks the estimate's relative standard deviation is
// sqrt((1-p)/(N p)): 1.2 % for the 4096 blocks of AllocHGlobal, 1.7 % for
// the 2048 of malloc, so 10 % is 8 and 6 standard deviations (a fixed
// seed besides). The estimate is of the bytes asked for, the workload's
// own count (glibc's 16-byte chunk headers are not in it). Lost records
// would make it low: the test asks for none.
func TestMemoryLiveNativeStacks(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("the native allocation probes need root (or CAP_PERFMON): run the live tests as root")
	}
	p := workload.Start(t, nil, "nativeleak", "managedMB=8")
	p.Stdin("info\n")
	before := awaitLine(t, p, "done info", 1)
	out := filepath.Join(t.TempDir(), "memory.json")
	pprofOut := filepath.Join(filepath.Dir(out), "native.pb.gz")
	type result struct {
		stderr []byte
		err    error
	}
	done := make(chan result, 1)
	base := countPerfFDs()
	go func() {
		_, se, err := runCaptured(t, "memory", "--json", "-o", out, "--pprof", pprofOut, "--pid", strconv.Itoa(p.Pid), "--native", "--duration", "10s",
			"--sample-rate", "16384", "--seed", "1", "--runtime=false")
		done <- result{se, err}
	}()
	// The probes are on once every thread's are open: 7 a thread,
	// opened before the sampling starts.
	threads, _ := os.ReadDir("/proc/" + strconv.Itoa(p.Pid) + "/task")
	want := base + 7*len(threads)
	deadline := time.Now().Add(30 * time.Second)
	for countPerfFDs() < want && time.Now().Before(deadline) {
		select {
		case r := <-done:
			t.Fatalf("clrspy memory --native ended early: %v\n%s", r.err, r.stderr)
		case <-time.After(50 * time.Millisecond):
		}
	}
	if countPerfFDs() < want {
		t.Fatalf("%d perf events open after 30 s, want %d", countPerfFDs()-base, want-base)
	}
	time.Sleep(500 * time.Millisecond)
	p.Stdin("hglobal 65536\nmalloc 32768\ninfo\n")
	after := awaitLine(t, p, "done info", 2)
	r := <-done
	t.Logf("clrspy: %s", r.stderr)
	if r.err != nil {
		t.Fatalf("clrspy memory --native: %v", r.err)
	}
	p.Stdin("exit\n")
	if _, err := p.Wait(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	hglobal := after["hglobal"] - before["hglobal"]
	malloc := after["malloc"] - before["malloc"]
	if hglobal != 64*mib || malloc != 32*mib {
		t.Fatalf("the workload leaked %.0f + %.0f bytes, want 64 + 32 MiB", hglobal, malloc)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var d nativeDoc
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	n := d.Native
	if n == nil {
		t.Fatalf("no native section:\n%s", b)
	}
	if n.SampleBytes != 16384 {
		t.Errorf("sample_bytes %d, want 16384", n.SampleBytes)
	}
	var env struct {
		Complete bool `json:"complete"`
	}
	json.Unmarshal(b, &env)
	if strings.Contains(string(r.stderr), "lost") || !env.Complete {
		t.Errorf("records lost: %s", r.stderr)
	}
	for i, s := range n.Outstanding {
		if i == 4 {
			break
		}
		t.Logf("outstanding %d: %.2f MiB in %d blocks: %s", i, float64(s.Bytes)/mib, s.Count, strings.Join(s.Frames, " < "))
	}
	if len(n.Outstanding) < 2 {
		t.Fatalf("%d outstanding stacks, want at least 2", len(n.Outstanding))
	}
	check := func(method string, leaked float64, extra string) {
		t.Helper()
		var bytes, count int64
		top := -1
		for i, s := range n.Outstanding {
			if s.names(method) {
				bytes += s.Bytes
				count += s.Count
				if top < 0 {
					top = i
				}
			}
		}
		if top < 0 || top > 1 {
			t.Errorf("%s is not in the two largest outstanding stacks (at %d)", method, top)
			return
		}
		s := n.Outstanding[top]
		if s.Frames[0] != "malloc" {
			t.Errorf("%s's stack has leaf %q, want malloc: %v", method, s.Frames[0], s.Frames)
		}
		if extra != "" && !s.names(extra) {
			t.Errorf("%s's stack does not name %s: %v", method, extra, s.Frames)
		}
		t.Logf("%s: %.2f MiB outstanding in %d blocks, leaked %.2f MiB in %.0f (%+.2f %%)", method, float64(bytes)/mib, count, leaked/mib, leaked/16384, 100*(float64(bytes)-leaked)/leaked)
		if math.Abs(float64(bytes)-leaked) > 0.10*leaked {
			t.Errorf("%s: %d bytes outstanding, the workload leaked %.0f: more than 10 %% apart", method, bytes, leaked)
		}
		var alloc int64
		for _, s := range n.Allocated {
			if s.names(method) {
				alloc += s.Bytes
			}
		}
		if math.Abs(float64(alloc)-leaked) > 0.10*leaked {
			t.Errorf("%s: %d bytes allocated, the workload allocated %.0f: more than 10 %% apart", method, alloc, leaked)
		}
	}
	check("LeakHGlobal", hglobal, "NativeMemory.Alloc")
	check("LeakMalloc", malloc, "")
	checkNativePprof(t, pprofOut, n.Outstanding, n.Allocated)
}

// checkNativePprof reads the --pprof file of the run back with pprof's
// parser: its largest inuse_space sample names LeakHGlobal's frames, the
// JSON's first outstanding stack, with the JSON's bytes and count, and
// every outstanding stack of the JSON is a sample with its values.
func checkNativePprof(t *testing.T, path string, outstanding, allocated []nativeStack) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("--pprof: %v", err)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		t.Fatalf("--pprof %s: %v", path, err)
	}
	if p.DefaultSampleType != "inuse_space" || len(p.SampleType) != 4 || p.SampleType[3].Type != "inuse_space" || p.SampleType[1].Type != "alloc_space" {
		t.Fatalf("sample types %v, default %q", p.SampleType, p.DefaultSampleType)
	}
	names := func(s *profile.Sample) string {
		var l []string
		for _, loc := range s.Location {
			for _, ln := range loc.Line {
				l = append(l, ln.Function.Name)
			}
		}
		return strings.Join(l, " < ")
	}
	var top *profile.Sample
	byFrames := map[string]*profile.Sample{}
	for _, s := range p.Sample {
		byFrames[names(s)] = s
		if top == nil || s.Value[3] > top.Value[3] {
			top = s
		}
	}
	if top == nil {
		t.Fatal("--pprof: no samples")
	}
	j := outstanding[0]
	t.Logf("pprof: top inuse %d bytes in %d blocks: %s", top.Value[3], top.Value[2], names(top))
	if !strings.Contains(names(top), "LeakHGlobal") || names(top) != strings.Join(j.Frames, " < ") {
		t.Errorf("pprof's top inuse stack %q, want the JSON's first, LeakHGlobal's: %q", names(top), strings.Join(j.Frames, " < "))
	}
	if top.Value[3] != j.Bytes || top.Value[2] != j.Count {
		t.Errorf("pprof's top inuse %d bytes, %d objects; the JSON's %d, %d", top.Value[3], top.Value[2], j.Bytes, j.Count)
	}
	for _, o := range outstanding {
		s := byFrames[strings.Join(o.Frames, " < ")]
		if s == nil || s.Value[3] != o.Bytes || s.Value[2] != o.Count {
			t.Errorf("outstanding %v (%d bytes): pprof sample %v", o.Frames, o.Bytes, s)
		}
	}
	for _, a := range allocated {
		s := byFrames[strings.Join(a.Frames, " < ")]
		if s == nil || s.Value[1] != a.Bytes || s.Value[0] != a.Count {
			t.Errorf("allocated %v (%d bytes): pprof sample %v", a.Frames, a.Bytes, s)
		}
	}
}

// heaptrackLeak is one location of heaptrack_print --print-leaks: the
// bytes leaked from it and the calls.
type heaptrackLeak struct {
	bytes float64
	calls int
}

// heaptrackLeaks reads heaptrack_print's leak list: its top-level lines
// ("67.11M leaked over 4096 calls from", one per calling location; the
// backtraces under each, ending "from:", add up to it), sizes in SI units
// to four digits.
func heaptrackLeaks(out string) []heaptrackLeak {
	var l []heaptrackLeak
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) != 6 || f[1] != "leaked" || f[5] != "from" || line[0] == ' ' {
			continue
		}
		mult := 1.0
		num := f[0]
		switch num[len(num)-1] {
		case 'K':
			mult, num = 1e3, num[:len(num)-1]
		case 'M':
			mult, num = 1e6, num[:len(num)-1]
		case 'G':
			mult, num = 1e9, num[:len(num)-1]
		case 'B':
			num = num[:len(num)-1]
		}
		v, err1 := strconv.ParseFloat(num, 64)
		n, err2 := strconv.Atoi(f[3])
		if err1 == nil && err2 == nil {
			l = append(l, heaptrackLeak{v * mult, n})
		}
	}
	return l
}

// TestMemoryLiveNativeHeaptrack runs the nativeleak workload under
// heaptrack (Debian's package: LD_PRELOAD, every allocation recorded) and
// attaches `clrspy memory --native` to it at the same time, then has it
// leak 64 MiB through Marshal.AllocHGlobal and 32 MiB through a P/Invoke
// of malloc in 16 KiB blocks. heaptrack, the independent oracle, counts
// the AllocHGlobal blocks exactly (its locations of 16 KiB calls: 4096
// calls, 64 MiB; it cannot name the JIT'd callers, so the join is by
// block size); clrspy's LeakHGlobal estimate agrees with it within 10 %
// (the sampling error, explained in TestMemoryLiveNativeStacks, is 1.2 %
// there). heaptrack does not see the P/Invoke'd malloc at all: the runtime
// resolves it with dlsym in libc.so.6 itself, past the preloaded library's
// interposer, while clrspy's probes are on libc's code and count it
// (within 10 % of 32 MiB).
func TestMemoryLiveNativeHeaptrack(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("the native allocation probes need root (or CAP_PERFMON): run the live tests as root")
	}
	if _, err := exec.LookPath("heaptrack"); err != nil {
		t.Fatal("heaptrack is not installed (apt-get install heaptrack): it is this test's oracle")
	}
	dir := t.TempDir()
	cmd := exec.Command("heaptrack", "-o", filepath.Join(dir, "ht"), workload.Exe(t), "nativeleak", "managedMB=8")
	p := workload.StartCmd(t, cmd, nil)
	// heaptrack's script runs the workload as its child: its own pid is
	// on its ready line.
	pid := 0
	for _, l := range strings.Split(p.Stderr(), "\n") {
		if v, ok := strings.CutPrefix(l, "ready "); ok {
			pid, _ = strconv.Atoi(strings.TrimSpace(v))
		}
	}
	if pid == 0 {
		t.Fatalf("no ready line:\n%s", p.Stderr())
	}
	p.Stdin("info\n")
	before := awaitLine(t, p, "done info", 1)
	out := filepath.Join(dir, "memory.json")
	type result struct {
		stderr []byte
		err    error
	}
	done := make(chan result, 1)
	base := countPerfFDs()
	go func() {
		_, se, err := runCaptured(t, "memory", "--json", "-o", out, "--pid", strconv.Itoa(pid), "--native", "--duration", "10s",
			"--sample-rate", "16384", "--seed", "2", "--runtime=false")
		done <- result{se, err}
	}()
	threads, _ := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	want := base + 7*len(threads)
	deadline := time.Now().Add(30 * time.Second)
	for countPerfFDs() < want && time.Now().Before(deadline) {
		select {
		case r := <-done:
			t.Fatalf("clrspy memory --native ended early: %v\n%s", r.err, r.stderr)
		case <-time.After(50 * time.Millisecond):
		}
	}
	time.Sleep(500 * time.Millisecond)
	p.Stdin("hglobal 65536\nmalloc 32768\ninfo\n")
	after := awaitLine(t, p, "done info", 2)
	r := <-done
	if r.err != nil {
		t.Fatalf("clrspy memory --native: %v\n%s", r.err, r.stderr)
	}
	p.Stdin("exit\n")
	if _, err := p.Wait(60 * time.Second); err != nil {
		t.Fatal(err)
	}
	hglobal := after["hglobal"] - before["hglobal"]
	malloc := after["malloc"] - before["malloc"]
	if hglobal != 64*mib || malloc != 32*mib {
		t.Fatalf("the workload leaked %.0f + %.0f bytes, want 64 + 32 MiB", hglobal, malloc)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "ht.*"))
	if len(files) != 1 {
		t.Fatalf("heaptrack's data: %v\n%s", files, p.Stderr())
	}
	pr, err := exec.Command("heaptrack_print", "-f", files[0], "--print-leaks", "1", "--print-peaks", "0", "--print-allocators", "0",
		"--print-temporary", "0", "--print-histogram", "0").Output()
	if err != nil {
		t.Fatalf("heaptrack_print: %v", err)
	}
	var htBytes float64
	htCalls := 0
	for _, l := range heaptrackLeaks(string(pr)) {
		if math.Abs(l.bytes/float64(l.calls)-16384) < 20 {
			htBytes += l.bytes
			htCalls += l.calls
		}
	}
	t.Logf("heaptrack: %.2f MiB leaked in %d calls of 16 KiB", htBytes/mib, htCalls)
	if htCalls != 4096 || math.Abs(htBytes-hglobal) > 0.001*hglobal {
		t.Fatalf("heaptrack saw %d calls, %.0f bytes of 16 KiB leaked; want AllocHGlobal's 4096, %.0f", htCalls, htBytes, hglobal)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var d nativeDoc
	if err := json.Unmarshal(b, &d); err != nil || d.Native == nil {
		t.Fatalf("%v\n%s", err, b)
	}
	sum := func(method string) (bytes int64) {
		for _, s := range d.Native.Outstanding {
			if s.names(method) {
				bytes += s.Bytes
			}
		}
		return bytes
	}
	h, m := float64(sum("LeakHGlobal")), float64(sum("LeakMalloc"))
	t.Logf("clrspy: LeakHGlobal %.2f MiB (heaptrack %.2f MiB, %+.2f %%), LeakMalloc %.2f MiB (the workload's %.2f, heaptrack none)",
		h/mib, htBytes/mib, 100*(h-htBytes)/htBytes, m/mib, malloc/mib)
	if math.Abs(h-htBytes) > 0.10*htBytes {
		t.Errorf("LeakHGlobal: clrspy %.0f bytes outstanding, heaptrack %.0f leaked: more than 10 %% apart", h, htBytes)
	}
	if math.Abs(m-malloc) > 0.10*malloc {
		t.Errorf("LeakMalloc: clrspy %.0f bytes outstanding, the workload leaked %.0f: more than 10 %% apart", m, malloc)
	}
	if top := d.Native.Outstanding; len(top) < 2 || !(top[0].names("LeakHGlobal") && top[1].names("LeakMalloc")) {
		t.Errorf("the two largest outstanding stacks are not LeakHGlobal's then LeakMalloc's: %+v", top[:min(2, len(top))])
	}
}
