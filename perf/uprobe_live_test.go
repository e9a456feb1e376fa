package perf

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// allocScript calls libc's allocator through ctypes, one line of stdin
// at a time, and prints each result: "calloc N M", "realloc P N",
// "malloc N", "free P" (P in hex), "thread N S" (a new thread that
// sleeps S seconds and mallocs N) answer "ADDR TID".
const allocScript = `
import ctypes, sys, threading, time
libc = ctypes.CDLL("libc.so.6", use_errno=True)
libc.malloc.restype = libc.calloc.restype = libc.realloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
libc.calloc.argtypes = [ctypes.c_size_t, ctypes.c_size_t]
libc.realloc.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
print("ready", flush=True)
for line in sys.stdin:
    f = line.split()
    if f[0] == "calloc": r = libc.calloc(int(f[1]), int(f[2]))
    elif f[0] == "realloc": r = libc.realloc(int(f[1], 16), int(f[2]))
    elif f[0] == "malloc": r = libc.malloc(int(f[1]))
    elif f[0] == "free": libc.free(int(f[1], 16)); r = 0
    elif f[0] == "thread":
        # A thread started now that waits before it allocates: followed
        # from its creation (the fork record), not the next scan.
        out = []
        th = threading.Thread(target=lambda: (time.sleep(float(f[2])), out.append((libc.malloc(int(f[1])), threading.get_native_id()))))
        th.start(); th.join()
        print("%x %d" % out[0], flush=True)
        continue
    else: break
    print("%x %d" % (r or 0, threading.get_native_id()), flush=True)
`

// TestAllocTracerCalls follows a Python process calling libc's calloc,
// realloc, malloc and free through ctypes, with sizes nothing else asks
// for: each call arrives as its entry (the size, calloc's product,
// realloc's pointer) and its return (the address Python printed), in
// order on the calling thread, free with its pointer; a thread started
// later is followed from its creation; the sampled
// entries' stacks name the allocator function and libffi's call into it.
// Both ways of opening the probes: defined in tracefs (the default: its
// group is gone from uprobe_events once the probes stop) and through the
// uprobe PMU.
func TestAllocTracerCalls(t *testing.T) {
	t.Run("tracefs", func(t *testing.T) { allocTracerCalls(t, false) })
	t.Run("pmu", func(t *testing.T) { allocTracerCalls(t, true) })
}

func allocTracerCalls(t *testing.T, pmu bool) {
	if os.Geteuid() != 0 {
		t.Fatal("the allocator probes need root (or CAP_PERFMON): run the live tests as root")
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatal("python3 is not installed: this test's target calls libc through ctypes")
	}
	cmd := exec.Command("python3", "-c", allocScript)
	in, _ := cmd.StdinPipe()
	outp, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	rd := bufio.NewReader(outp)
	line := func() string {
		l, err := rd.ReadString('\n')
		if err != nil && err != io.EOF {
			t.Fatal(err)
		}
		return strings.TrimSpace(l)
	}
	if l := line(); l != "ready" {
		t.Fatalf("python: %q", l)
	}
	tr, err := OpenAllocTracer(cmd.Process.Pid, AllocOptions{NoSession: true, NoTracefs: pmu})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	group := fmt.Sprintf("clrspy_%d_%d/", os.Getpid(), cmd.Process.Pid)
	defined := func() int {
		b, _ := os.ReadFile("/sys/kernel/tracing/uprobe_events")
		return strings.Count(string(b), group)
	}
	if n := defined(); pmu && n != 0 || !pmu && n != len(allocProbes) {
		t.Errorf("%d events of %s in uprobe_events (notes %v), want %d", n, group, tr.Notes(), map[bool]int{true: 0, false: len(allocProbes)}[pmu])
	}
	var evs []AllocEvent
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- tr.Run(ctx, func(size uint64) bool { return size > 1000000 }, func(e *AllocEvent) { evs = append(evs, *e) })
	}()
	do := func(c string) (uint64, int) {
		fmt.Fprintln(in, c)
		f := strings.Fields(line())
		if len(f) != 2 {
			t.Fatalf("%s: python said %q", c, f)
		}
		a, _ := strconv.ParseUint(f[0], 16, 64)
		tid, _ := strconv.Atoi(f[1])
		return a, tid
	}
	p, tid := do("calloc 3 411523")
	q, _ := do(fmt.Sprintf("realloc %x 2345678", p))
	m, _ := do("malloc 3456789")
	do(fmt.Sprintf("free %x", q))
	tm, ttid := do("thread 4567891 0.5")
	time.Sleep(200 * time.Millisecond) // past the delivery lag
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	tr.StopProbes()
	if n := defined(); n != 0 {
		t.Errorf("%d events of %s left in uprobe_events after StopProbes", n, group)
	}
	// The calls of interest, on the calling thread, from the calloc on.
	type ev struct {
		Kind, Call AllocKind
		Size, Addr uint64
		Sampled    bool
	}
	var got []ev
	var stacks []int32
	on := false
	for _, e := range evs {
		if e.Tid != tid {
			continue
		}
		if e.Kind == AllocCalloc && e.Size == 3*411523 {
			on = true
		}
		interesting := e.Size == 3*411523 || e.Size == 2345678 || e.Size == 3456789 ||
			e.Kind == AllocFree && e.Addr == q || e.Kind == AllocReturn && (e.Addr == p || e.Addr == q || e.Addr == m)
		if on && interesting {
			got = append(got, ev{e.Kind, e.Call, e.Size, e.Addr, e.Sampled})
			if e.Sampled {
				stacks = append(stacks, e.Stack)
			}
		}
	}
	want := []ev{
		{AllocCalloc, AllocCalloc, 1234569, 0, true},
		{AllocReturn, AllocCalloc, 0, p, false},
		{AllocRealloc, AllocRealloc, 2345678, p, true},
		{AllocReturn, AllocRealloc, 0, q, false},
		{AllocMalloc, AllocMalloc, 3456789, 0, true},
		{AllocReturn, AllocMalloc, 0, m, false},
		{AllocFree, AllocFree, 0, q, false},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("events of thread %d:\n%v\nwant\n%v", tid, got, want)
	}
	if st := tr.Stats(); st.Lost != 0 || st.Threads == 0 {
		t.Errorf("stats %+v", st)
	}
	// The new thread's malloc and its return, under its own tid.
	var th []string
	for _, e := range evs {
		if e.Tid == ttid && (e.Size == 4567891 || e.Kind == AllocReturn && e.Addr == tm) {
			th = append(th, fmt.Sprintf("%d %d %#x", e.Kind, e.Size, e.Addr))
		}
	}
	if want := []string{fmt.Sprintf("%d 4567891 0x0", AllocMalloc), fmt.Sprintf("%d 0 %#x", AllocReturn, tm)}; fmt.Sprint(th) != fmt.Sprint(want) || ttid == tid {
		t.Errorf("thread %d started after the probes: %v, want %v", ttid, th, want)
	}
	for i, fr := range tr.Frames(stacks) {
		var names []string
		for _, f := range fr {
			names = append(names, f.Name)
		}
		t.Logf("stack %d: %s", i, strings.Join(names, " < "))
		leaf := []string{"calloc", "realloc", "malloc"}[i]
		if len(names) < 3 || names[0] != leaf {
			t.Errorf("stack %d: %v, want %s as the leaf", i, names, leaf)
			continue
		}
		ffi := false
		for _, n := range names {
			ffi = ffi || strings.HasPrefix(n, "ffi_call")
		}
		if !ffi {
			t.Errorf("stack %d does not go through libffi's ffi_call: %v", i, names)
		}
	}
	fmt.Fprintln(in, "exit")
}
