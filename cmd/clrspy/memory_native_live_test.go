package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

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
// The sampling error: with --sample-bytes R = 16 KiB, a 16 KiB block is
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
	type result struct {
		stderr []byte
		err    error
	}
	done := make(chan result, 1)
	base := countPerfFDs()
	go func() {
		_, se, err := runCaptured(t, "memory", "--json", "-o", out, "--pid", strconv.Itoa(p.Pid), "--native", "--duration", "10s",
			"--sample-bytes", "16384", "--seed", "1", "--runtime=false")
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
	if strings.Contains(string(r.stderr), "lost") {
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
}
