package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/clrspy/clrspy/internal/workload"
	"github.com/clrspy/clrspy/ipc"
	"github.com/clrspy/clrspy/report"
)

// clrmdProject is the ClrMD program (testdata/oracles/ClrMDHeap): a core
// dump walked by Microsoft.Diagnostics.Runtime from NuGet.
var clrmdProject = workload.Project{
	Dir:       "testdata/oracles/ClrMDHeap",
	Name:      "ClrMDHeap",
	Out:       "testdata/oracles/bin",
	Artifacts: "testdata/oracles/obj",
	Lock:      "testdata/oracles/build.lock",
}

var (
	clrmdOnce sync.Once
	clrmdExe  string
	clrmdErr  error
)

// clrmdHeap is what ClrMDHeap prints (without --live).
type clrmdHeap struct {
	Runtime string `json:"runtime"`
	Heap    struct {
		Objects int64 `json:"objects"`
		Bytes   int64 `json:"bytes"`
		Types   []struct {
			Type  string `json:"type"`
			Count int64  `json:"count"`
			Bytes int64  `json:"bytes"`
		} `json:"types"`
	} `json:"heap"`
	Frozen struct {
		Objects int64 `json:"objects"`
		Bytes   int64 `json:"bytes"`
	} `json:"frozen"`
}

// gcdumpToolVersion is the dotnet-gcdump whose assemblies (PerfView's
// MemoryGraph and GCHeapDump, as dotnet/diagnostics compiles them) the
// PerfViewGcdump program writes with.
const gcdumpToolVersion = "10.0.750501"

// perfviewProject is the PerfViewGcdump program (testdata/oracles/
// PerfViewGcdump); Args gets the tool's directory.
var perfviewProject = workload.Project{
	Dir:       "testdata/oracles/PerfViewGcdump",
	Name:      "PerfViewGcdump",
	Out:       "testdata/oracles/bin-perfview",
	Artifacts: "testdata/oracles/obj",
	Lock:      "testdata/oracles/build.lock",
}

var (
	perfviewOnce sync.Once
	perfviewExe  string
	perfviewErr  error
)

// gcdumpTool installs dotnet-gcdump (NuGet, dotnet tool install) under
// testdata/oracles/tools unless there, and returns the directory holding
// dotnet-gcdump.dll.
func gcdumpTool() (string, error) {
	root, err := workload.RepoRoot()
	if err != nil {
		return "", err
	}
	tools := filepath.Join(root, "testdata/oracles/tools")
	dir := filepath.Join(tools, ".store/dotnet-gcdump", gcdumpToolVersion, "dotnet-gcdump", gcdumpToolVersion, "tools/net8.0/any")
	lock, err := os.OpenFile(filepath.Join(root, "testdata/oracles/build.lock"), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return "", err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", err
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	if _, err := os.Stat(filepath.Join(dir, "dotnet-gcdump.dll")); err == nil {
		return dir, nil
	}
	cmd := exec.Command("dotnet", "tool", "install", "dotnet-gcdump", "--version", gcdumpToolVersion, "--tool-path", tools)
	cmd.Env = append(os.Environ(), "DOTNET_CLI_TELEMETRY_OPTOUT=1", "DOTNET_NOLOGO=1", "DOTNET_CLI_UI_LANGUAGE=en")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("dotnet tool install dotnet-gcdump %s: %v\n%s", gcdumpToolVersion, err, b)
	}
	if _, err := os.Stat(filepath.Join(dir, "dotnet-gcdump.dll")); err != nil {
		return "", fmt.Errorf("dotnet tool install left no %s", filepath.Join(dir, "dotnet-gcdump.dll"))
	}
	return dir, nil
}

// runPerfViewGcdump writes dump's heap as out with PerfView's serializer.
func runPerfViewGcdump(t *testing.T, dump, out string) {
	t.Helper()
	perfviewOnce.Do(func() {
		dir, err := gcdumpTool()
		if err != nil {
			perfviewErr = err
			return
		}
		p := perfviewProject
		p.Args = []string{"-p:GcdumpTool=" + dir}
		perfviewExe, perfviewErr = workload.Build(p)
	})
	if perfviewErr != nil {
		t.Fatalf("building the PerfView writer: %v", perfviewErr)
	}
	cmd := exec.Command(perfviewExe, dump, out)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if b, err := cmd.Output(); err != nil {
		t.Fatalf("PerfViewGcdump: %v\n%s%s", err, b, stderr.Bytes())
	}
}

// runClrMD builds the ClrMD program (once per process) and walks dump.
func runClrMD(t *testing.T, dump string) *clrmdHeap {
	t.Helper()
	clrmdOnce.Do(func() { clrmdExe, clrmdErr = workload.Build(clrmdProject) })
	if clrmdErr != nil {
		t.Fatalf("building the ClrMD program: %v", clrmdErr)
	}
	cmd := exec.Command(clrmdExe, dump)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ClrMDHeap %s: %v\n%s", dump, err, stderr.Bytes())
	}
	var h clrmdHeap
	if err := json.Unmarshal(out, &h); err != nil {
		t.Fatalf("ClrMDHeap: %v\n%s", err, out)
	}
	return &h
}

// runtimeTypeName turns ClrMD's type name into the one the runtime's heap
// dump (BulkType) gives the same type, so both sides can be keyed alike.
// ClrMD writes C#-like names with every declaring type
// ("System.Collections.Generic.Dictionary<System.String, X>+Entry[]"); the
// runtime writes a generic's arity and its arguments in brackets
// ("System.Collections.Generic.Dictionary`2[System.String,X]") and a
// nested type by its own name only, its own arity, and every argument of
// the instantiation ("Entry[System.String,X][]"); type arguments keep
// their declaring types ("System.Func`1[System.Diagnostics.Tracing.
// EventSource+OverrideEventProvider]").
func runtimeTypeName(clrmd string) string {
	return convertTypeName(clrmd, true)
}

func convertTypeName(s string, top bool) string {
	s = strings.TrimSpace(s)
	suffix := ""
	for strings.HasSuffix(s, "]") {
		i := strings.LastIndexByte(s, '[')
		if i < 0 || strings.Trim(s[i+1:len(s)-1], ",") != "" {
			break
		}
		suffix = s[i:] + suffix
		s = s[:i]
	}
	type segment struct {
		name string
		args []string
	}
	var segs []segment
	depth, start := 0, 0
	cur := segment{}
	for i := 0; i < len(s); i++ {
		// A compiler-generated name ("<>c", "<Main>d__0") starts with its
		// own brackets: they are part of the name.
		if s[i] == '<' && depth == 0 && i == start {
			if j := strings.IndexByte(s[i:], '>'); j > 0 {
				i += j
				continue
			}
		}
		switch s[i] {
		case '<':
			if depth == 0 {
				cur.name = s[start:i]
				start = i + 1
			}
			depth++
		case ',':
			if depth == 1 {
				cur.args = append(cur.args, s[start:i])
				start = i + 1
			}
		case '>':
			depth--
			if depth == 0 {
				cur.args = append(cur.args, s[start:i])
				start = i + 1
			}
		case '+':
			if depth == 0 {
				if cur.name == "" {
					cur.name = s[start:i]
				}
				segs = append(segs, cur)
				cur = segment{}
				start = i + 1
			}
		}
	}
	if cur.name == "" {
		cur.name = s[start:]
	}
	segs = append(segs, cur)
	var args []string
	for _, sg := range segs {
		for _, a := range sg.args {
			args = append(args, convertTypeName(a, false))
		}
	}
	last := segs[len(segs)-1]
	var b strings.Builder
	if top && len(segs) > 1 {
		b.WriteString(last.name)
	} else {
		for i, sg := range segs {
			if i > 0 {
				b.WriteByte('+')
			}
			b.WriteString(sg.name)
		}
	}
	if n := len(last.args); n > 0 {
		b.WriteString("`" + strconv.Itoa(n))
	}
	if len(args) > 0 {
		b.WriteString("[" + strings.Join(args, ",") + "]")
	}
	return b.String() + suffix
}

func TestRuntimeTypeName(t *testing.T) {
	for in, want := range map[string]string{
		"Workload.GraphItem[]": "Workload.GraphItem[]",
		"System.Collections.Generic.Dictionary<System.String, Workload.IWorkload>":                                              "System.Collections.Generic.Dictionary`2[System.String,Workload.IWorkload]",
		"System.Collections.Generic.Dictionary<System.String, Workload.IWorkload>+Entry[]":                                      "Entry[System.String,Workload.IWorkload][]",
		"System.RuntimeType+RuntimeTypeCache+MemberInfoCache<System.Reflection.RuntimeFieldInfo>":                               "MemberInfoCache`1[System.Reflection.RuntimeFieldInfo]",
		"System.Collections.Generic.List<System.Func<System.Diagnostics.Tracing.EventSource>>":                                  "System.Collections.Generic.List`1[System.Func`1[System.Diagnostics.Tracing.EventSource]]",
		"System.Func<System.Diagnostics.Tracing.EventSource>[]":                                                                 "System.Func`1[System.Diagnostics.Tracing.EventSource][]",
		"System.Buffers.SharedArrayPool<System.Char>+<>c":                                                                       "<>c[System.Char]",
		"System.Collections.Generic.Dictionary<System.Guid, System.Diagnostics.Tracing.EventSource+OverrideEventProvider>":      "System.Collections.Generic.Dictionary`2[System.Guid,System.Diagnostics.Tracing.EventSource+OverrideEventProvider]",
		"System.Runtime.CompilerServices.ConditionalWeakTable<System.Buffers.SharedArrayPoolThreadLocalArray[], System.Object>": "System.Runtime.CompilerServices.ConditionalWeakTable`2[System.Buffers.SharedArrayPoolThreadLocalArray[],System.Object]",
		"System.Int32[,]":                      "System.Int32[,]",
		"Workload.Graph+<>c__DisplayClass13_0": "<>c__DisplayClass13_0",
		"<Main>d__0":                           "<Main>d__0",
	} {
		if got := runtimeTypeName(in); got != want {
			t.Errorf("%s\n got %s\nwant %s", in, got, want)
		}
	}
}

// TestSnapshotClrMD checks clrspy's snapshot against ClrMD, an
// independent reader of the heap: the quiet graph workload is snapshotted
// live, then core-dumped through the diagnostics IPC's dump command
// (ipc.Client.WriteDump: the runtime's createdump, with the heap), and
// ClrMD walks the dump's heap.
//
// ClrMD's whole heap, not its walk from its own roots, is what a snapshot
// must equal: the snapshot's induced blocking gen2 GC leaves only what it
// marked, and its heap dump describes every object it left (frozen NonGC
// segments included), while ClrMD's roots lack some the GC reports
// (statics, the finalizer queue). Only the dump has what the runtime
// allocates between the GC and the dump (the session's end calls managed
// EventSources back: EventCommandEventArgs, GCMemoryInfoData of the gen2
// callback) and the dead objects the GC kept for their finalizers
// (DynamicResolver+DestroyScout re-registers itself): so per type ClrMD
// has at least clrspy's count, and its total exceeds clrspy's by a few
// dozen objects (18 objects, 962 bytes here). A first snapshot warms up
// what the first session initialises (NativeRuntimeEventSource's
// metadata: thousands of objects that would otherwise appear after the
// measured GC).
func TestSnapshotClrMD(t *testing.T) {
	p := workload.Start(t, nil, "graph", "items=3000")
	waitStderr(t, p, "graph ready")
	dir := t.TempDir()
	pid := strconv.Itoa(p.Pid)
	if _, stderr, err := runCaptured(t, "snapshot", "--pid", pid, "--json", "-o", filepath.Join(dir, "warm.json")); err != nil {
		t.Fatalf("clrspy snapshot: %v\n%s", err, stderr)
	}
	stdout, stderr, err := runCaptured(t, "snapshot", "--pid", pid, "--json", "--top", "0")
	if err != nil {
		t.Fatalf("clrspy snapshot: %v\n%s", err, stderr)
	}
	var d report.SnapshotDocument
	if err := json.Unmarshal(stdout, &d); err != nil {
		t.Fatal(err)
	}
	c, err := ipc.Dial(p.Pid)
	if err != nil {
		t.Fatal(err)
	}
	dump := filepath.Join(dir, "core")
	start := time.Now()
	if err := c.WriteDump(dump, ipc.DumpWithHeap, 0); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(dump)
	if err != nil {
		t.Fatalf("the runtime answered but wrote no dump: %v", err)
	}
	t.Logf("core dump: %d MB in %v", st.Size()>>20, time.Since(start).Round(time.Millisecond))
	start = time.Now()
	h := runClrMD(t, dump)
	t.Logf("ClrMD in %v: %d objects, %d bytes (frozen segments %d, %d); clrspy: %d objects, %d bytes",
		time.Since(start).Round(time.Millisecond), h.Heap.Objects, h.Heap.Bytes, h.Frozen.Objects, h.Frozen.Bytes, d.Objects, d.Bytes)
	p.Stdin("exit\n")
	if _, err := p.Wait(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	if !d.Complete {
		t.Fatalf("the snapshot is incomplete: %v", d.Partial)
	}

	mine, theirs := map[string][2]int64{}, map[string][2]int64{}
	for _, ty := range d.Types {
		v := mine[ty.Type]
		mine[ty.Type] = [2]int64{v[0] + int64(ty.Count), v[1] + int64(ty.Bytes)}
	}
	for _, ty := range h.Heap.Types {
		n := runtimeTypeName(ty.Type)
		v := theirs[n]
		theirs[n] = [2]int64{v[0] + ty.Count, v[1] + ty.Bytes}
	}
	// The workload's own types: exactly equal.
	for _, n := range []string{"Workload.GraphItem", "Workload.GraphLeaf", "Workload.GraphHolder", "Workload.GraphItem[]", "Workload.GraphHandleOnly", "Workload.GraphStackOnly"} {
		if mine[n] != theirs[n] || mine[n][0] == 0 {
			t.Errorf("%s: clrspy %d objects %d bytes, ClrMD %d objects %d bytes", n, mine[n][0], mine[n][1], theirs[n][0], theirs[n][1])
		}
	}
	// Every type: nothing of the snapshot is missing from the dump, and
	// what the dump has more was allocated after the GC.
	var names []string
	for n := range mine {
		names = append(names, n)
	}
	for n := range theirs {
		if _, ok := mine[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	equal := 0
	for _, n := range names {
		switch {
		case mine[n] == theirs[n]:
			equal++
		case mine[n][0] > theirs[n][0]:
			t.Errorf("%s: clrspy %v objects/bytes, more than the dump's %v", n, mine[n], theirs[n])
		default:
			t.Logf("allocated after the GC? %s: clrspy %v, ClrMD %v", n, mine[n], theirs[n])
		}
	}
	// The same heap as a .gcdump written by PerfView's own serializer
	// (MemoryGraph, GCHeapDump.WriteMemoryGraph) from ClrMD's walk, read
	// by clrspy: every type ClrMD counted, with its count and bytes.
	gcd := filepath.Join(dir, "perfview.gcdump")
	runPerfViewGcdump(t, dump, gcd)
	stdout, stderr, err = runCaptured(t, "snapshot", "--json", "--top", "0", gcd)
	if err != nil {
		t.Fatalf("clrspy snapshot %s: %v\n%s", gcd, err, stderr)
	}
	var pv report.SnapshotDocument
	if err := json.Unmarshal(stdout, &pv); err != nil {
		t.Fatal(err)
	}
	t.Logf("PerfView's .gcdump of the dump: %d objects, %d bytes, complete %v, roots %v", pv.Objects, pv.Bytes, pv.Complete, pv.Roots)
	if !pv.Complete || int64(pv.Objects) != h.Heap.Objects || int64(pv.Bytes) != h.Heap.Bytes || pv.Roots["stack"] == 0 || pv.Roots["handle"] == 0 {
		t.Errorf("PerfView's .gcdump reads as %d objects, %d bytes, complete %v, roots %v; ClrMD walked %d, %d",
			pv.Objects, pv.Bytes, pv.Complete, pv.Roots, h.Heap.Objects, h.Heap.Bytes)
	}
	pvTypes := map[string][2]int64{}
	for _, ty := range pv.Types {
		pvTypes[ty.Type] = [2]int64{int64(ty.Count), int64(ty.Bytes)}
	}
	for _, ty := range h.Heap.Types {
		if got := pvTypes[ty.Type]; got != [2]int64{ty.Count, ty.Bytes} {
			t.Errorf("PerfView's .gcdump: %s has %d objects, %d bytes; ClrMD counted %d, %d", ty.Type, got[0], got[1], ty.Count, ty.Bytes)
		}
	}

	extraObjects, extraBytes := h.Heap.Objects-int64(d.Objects), h.Heap.Bytes-int64(d.Bytes)
	t.Logf("%d of %d types equal; the dump has %d objects and %d bytes more", equal, len(names), extraObjects, extraBytes)
	if extraObjects < 0 || extraObjects > 300 || extraBytes < 0 || extraBytes > 64<<10 {
		t.Errorf("ClrMD's heap has %d objects and %d bytes more than the snapshot; want 0–300 and 0–64 KiB (allocations after the snapshot's GC)", extraObjects, extraBytes)
	}
}
