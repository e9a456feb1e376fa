package main

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clrspy/clrspy/internal/workload"
	"github.com/clrspy/clrspy/ipc"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/report"
)

// waitStderr waits until the workload's stderr holds want.
func waitStderr(t *testing.T, p *workload.Proc, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(p.Stderr(), want) {
		if time.Now().After(deadline) || p.Exited() {
			t.Fatalf("workload never printed %q:\n%s", want, p.Stderr())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestSnapshotLive attaches `clrspy snapshot` to the graph workload
// (testdata/workloads/Workload/Graph.cs): 3,000 GraphItem, each with a
// GraphLeaf, in an array under the static Holder; one object held only
// by a GC handle, one only by a parked thread's local. The snapshot's
// counts of the workload's types are the workload's, the holder's
// retained bytes are the bytes the workload allocated building it (its
// own GC.GetAllocatedBytesForCurrentThread), and the three roots are
// named. The workload then adds 700 items; the diff of a second snapshot
// with the first is exactly those objects and bytes.
func TestSnapshotLive(t *testing.T) {
	p := workload.Start(t, nil, "graph", "items=3000")
	waitStderr(t, p, "graph ready")
	dir := t.TempDir()
	first, second := filepath.Join(dir, "first.nettrace"), filepath.Join(dir, "second.nettrace")
	out := filepath.Join(dir, "snap.json")
	pid := strconv.Itoa(p.Pid)
	if _, stderr, err := runCaptured(t, "snapshot", "--pid", pid, "--json", "--top", "0", "--why", "Workload.GraphStackOnly", "--save", first, "-o", out); err != nil {
		t.Fatalf("clrspy snapshot: %v\n%s", err, stderr)
	}
	var d report.SnapshotDocument
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	p.Stdin("add 700\n")
	waitStderr(t, p, "added 700")
	if _, stderr, err := runCaptured(t, "snapshot", "--pid", pid, "--save", second, "-o", filepath.Join(dir, "snap2.txt")); err != nil {
		t.Fatalf("second clrspy snapshot: %v\n%s", err, stderr)
	}
	p.Stdin("exit\n")
	res, err := p.Wait(30 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var holderBytes, addedBytes int64
	if res.Get("holderBytes", &holderBytes) != nil || res.Get("addedBytes", &addedBytes) != nil {
		t.Fatal("workload result lacks its byte counts")
	}

	t.Logf("%d objects, %d bytes, pause %.2f ms, roots %v, missing %+v", d.Objects, d.Bytes, d.PauseMs, d.Roots, d.Missing)
	if !d.Complete || d.EventsLost != 0 || !d.Live {
		t.Errorf("complete %v, events lost %d, live %v: %v", d.Complete, d.EventsLost, d.Live, d.Partial)
	}
	if d.PauseMs <= 0 {
		t.Errorf("the induced GC's pause is %v ms", d.PauseMs)
	}
	types := map[string]report.SnapshotTypeJSON{}
	for _, ty := range d.Types {
		types[ty.Type] = ty
	}
	for name, want := range map[string]uint64{"Workload.GraphItem": 3000, "Workload.GraphLeaf": 3000, "Workload.GraphHolder": 1,
		"Workload.GraphItem[]": 1, "Workload.GraphHandleOnly": 1, "Workload.GraphStackOnly": 1} {
		if got := types[name].Count; got != want {
			t.Errorf("%s: %d objects in the snapshot, the workload made %d", name, got, want)
		}
	}
	if got := types["Workload.GraphHolder"].RetainedBytes; got != uint64(holderBytes) || !types["Workload.GraphHolder"].RetainedExact {
		t.Errorf("GraphHolder retains %d bytes (exact %v); the workload allocated %d building it", got, types["Workload.GraphHolder"].RetainedExact, holderBytes)
	}
	// Items as a set keep themselves and their leaves (exact: a walk
	// without them), the leaves only themselves.
	if it, lf := types["Workload.GraphItem"], types["Workload.GraphLeaf"]; !it.RetainedExact || it.RetainedBytes != it.Bytes+lf.Bytes || lf.RetainedBytes != lf.Bytes {
		t.Errorf("GraphItem retains %d (exact %v), GraphLeaf %d: want %d and %d", it.RetainedBytes, it.RetainedExact, lf.RetainedBytes, it.Bytes+lf.Bytes, lf.Bytes)
	}
	if len(d.Paths) != 1 || d.Paths[0].RootKind != "stack" || !strings.Contains(d.Paths[0].Root, "Workload.Graph.Park") {
		t.Errorf("GraphStackOnly's paths %+v, want one, from the stack of Workload.Graph.Park", d.Paths)
	}

	// The other two roots, and the diff, from the saved traces.
	stdout, stderr, err := runCaptured(t, "snapshot", "--json", "--why", "Workload.GraphLeaf", first)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	var leaf report.SnapshotDocument
	json.Unmarshal(stdout, &leaf)
	// The static root by class and field: the event names the field and
	// its object's type (GraphHolder); the class comes from the module's
	// metadata.
	if len(leaf.Paths) != 1 || leaf.Paths[0].RootKind != "static" || leaf.Paths[0].Root != "Workload.Graph.Holder" || leaf.Paths[0].Count != 3000 {
		t.Errorf("GraphLeaf's paths %+v, want 3000 objects from the static Workload.Graph.Holder", leaf.Paths)
	}
	stdout, _, _ = runCaptured(t, "snapshot", "--json", "--why", "Workload.GraphHandleOnly", first)
	var handle report.SnapshotDocument
	json.Unmarshal(stdout, &handle)
	if len(handle.Paths) != 1 || handle.Paths[0].RootKind != "handle" || len(handle.Paths[0].Path) != 1 {
		t.Errorf("GraphHandleOnly's paths %+v, want one, straight from a handle", handle.Paths)
	}
	// The first snapshot as a .gcdump, read back: the same types.
	gcdump := filepath.Join(dir, "first.gcdump")
	if _, stderr, err := runCaptured(t, "snapshot", first, "-o", gcdump); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	stdout, _, _ = runCaptured(t, "snapshot", "--json", "--top", "0", gcdump)
	var back report.SnapshotDocument
	json.Unmarshal(stdout, &back)
	if back.Objects != d.Objects || back.Bytes != d.Bytes {
		t.Errorf("the .gcdump reads back %d objects, %d bytes; the snapshot had %d, %d", back.Objects, back.Bytes, d.Objects, d.Bytes)
	}
	stdout, stderr, err = runCaptured(t, "snapshot", "--json", "--top", "0", "--diff", first, second)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	var diff report.SnapshotDiffDocument
	if err := json.Unmarshal(stdout, &diff); err != nil {
		t.Fatal(err)
	}
	deltas := map[string]report.SnapshotTypeDeltaJSON{}
	for _, ty := range diff.Types {
		deltas[ty.Type] = ty
	}
	var bytes int64
	for name, want := range map[string]int64{"Workload.GraphItem": 700, "Workload.GraphLeaf": 700, "Workload.GraphItem[]": 1,
		"Workload.GraphHolder": 0, "Workload.GraphHandleOnly": 0, "Workload.GraphStackOnly": 0} {
		if got := deltas[name].CountDelta; got != want {
			t.Errorf("%s: count delta %d, the workload added %d", name, got, want)
		}
		bytes += deltas[name].BytesDelta
	}
	if bytes != addedBytes || deltas["Workload.GraphHolder"].RetainedDelta != addedBytes || !deltas["Workload.GraphHolder"].RetainedExact {
		t.Errorf("the workload's types grew by %d bytes and the holder's retained bytes by %d; it allocated %d",
			bytes, deltas["Workload.GraphHolder"].RetainedDelta, addedBytes)
	}
}

// TestSnapshotLaunch: with -- COMMAND, the snapshot is taken --after the
// start (not at startup, where the session would induce the GC before
// Main), then the program is sent SIGTERM: the idle workload, which would
// run 30 s, ends with the snapshot.
func TestSnapshotLaunch(t *testing.T) {
	start := time.Now()
	argv := workload.Argv(t, "idle", "seconds=30")
	stdout, stderr, err := runCaptured(t, append([]string{"snapshot", "--json", "--top", "0", "--why", "System.Threading.Thread", "--after", "1500ms", "--"}, argv...)...)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	// The workload's own "ready" and exit lines share the streams.
	i := strings.Index(string(stdout), "{\n")
	if i < 0 {
		t.Fatalf("no JSON document in %q", stdout)
	}
	var d report.SnapshotDocument
	if err := json.NewDecoder(strings.NewReader(string(stdout[i:]))).Decode(&d); err != nil {
		t.Fatal(err)
	}
	if !d.Live || !d.Complete || d.Objects < 100 || d.GC == 0 || len(d.Paths) == 0 {
		t.Errorf("live %v complete %v, %d objects, GC %d, %d paths to Thread", d.Live, d.Complete, d.Objects, d.GC, len(d.Paths))
	}
	if el := time.Since(start); el > 25*time.Second {
		t.Errorf("took %v: the program was not ended after the snapshot", el)
	}
}

// TestSnapshotBesideSession: with another session open on the process
// (here a GC session, as clrspy serve's or top's monitoring), the runtime
// would not name in a second snapshot the types it named in the first
// (it names each type once, and forgets only when no session has its Type
// keyword on after a session change: measured, 190 of 191 types unnamed).
// snapshot makes it forget first (ipc.Client.ResetTypeLog): both
// snapshots name every type, and the workload's counts are there.
func TestSnapshotBesideSession(t *testing.T) {
	p := workload.Start(t, nil, "graph", "items=1000")
	waitStderr(t, p, "graph ready")
	c, err := ipc.Dial(p.Pid)
	if err != nil {
		t.Fatal(err)
	}
	other, err := c.StartSession(ipc.SessionConfig{BufferMB: 16, NoRundown: true,
		Providers: []ipc.Provider{{Name: nettrace.ProviderRuntime, Keywords: ipc.KeywordGC, Level: ipc.LevelInformational}}})
	if err != nil {
		t.Fatal(err)
	}
	drained := make(chan struct{})
	go func() {
		io.Copy(io.Discard, other)
		close(drained)
	}()
	defer func() {
		other.Stop()
		<-drained
		other.Close()
	}()
	pid := strconv.Itoa(p.Pid)
	for i := range 2 {
		stdout, stderr, err := runCaptured(t, "snapshot", "--pid", pid, "--json", "--top", "0", "--why", "Workload.GraphLeaf")
		if err != nil {
			t.Fatalf("snapshot %d: %v\n%s", i+1, err, stderr)
		}
		var d report.SnapshotDocument
		if err := json.Unmarshal(stdout, &d); err != nil {
			t.Fatal(err)
		}
		unnamed := 0
		counts := map[string]uint64{}
		for _, ty := range d.Types {
			if strings.HasPrefix(ty.Type, "Type(0x") {
				unnamed++
			}
			counts[ty.Type] = ty.Count
		}
		if unnamed > 0 || !d.Complete || counts["Workload.GraphItem"] != 1000 || counts["Workload.GraphLeaf"] != 1000 {
			t.Errorf("snapshot %d beside another session: %d of %d types unnamed, complete %v (%v), %d GraphItem and %d GraphLeaf (the workload made 1000 each)",
				i+1, unnamed, len(d.Types), d.Complete, d.Partial, counts["Workload.GraphItem"], counts["Workload.GraphLeaf"])
		}
		// The live form names the static root by class and field too.
		if len(d.Paths) != 1 || d.Paths[0].Root != "Workload.Graph.Holder" || d.Paths[0].Count != 1000 {
			t.Errorf("snapshot %d: GraphLeaf's paths %+v, want 1000 objects from the static Workload.Graph.Holder", i+1, d.Paths)
		}
	}
}
