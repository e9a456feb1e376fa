package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/internal/workload"
	"github.com/clrspy/clrspy/report"
)

// TestHeapLive launches the lifetimes workload under `clrspy heap`: two
// same-sized types, ShortLived always dropped, LongLived kept one in two for
// several induced gen2 GCs and then released before another one. The report must
// give LongLived a survival rate within 5 points of the kept fraction,
// ShortLived nearly none, and declare the released objects dead at the GC
// after their release (within one GC). Workstation GC, then server GC with
// two heaps (each heap sends its own range events, Index restarting at 0).
func TestHeapLive(t *testing.T) {
	t.Run("workstation", func(t *testing.T) { heapLive(t) })
	t.Run("server", func(t *testing.T) {
		t.Setenv("DOTNET_gcServer", "1")
		t.Setenv("DOTNET_GCHeapCount", "2")
		heapLive(t)
	})
}

func heapLive(t *testing.T) {
	argv := workload.Argv(t, "lifetimes", "objects=4000000", "keep=2", "hold=6")
	out := filepath.Join(t.TempDir(), "heap.json")
	// The launched workload's stdout passes through clrspy's: catch it in a
	// file to read the workload's own account of what it did.
	childOut, err := os.Create(filepath.Join(t.TempDir(), "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stdout
	os.Stdout = childOut
	root := newRootCmd()
	root.SetArgs(append([]string{"heap", "--json", "--objects", "-o", out, "--"}, argv...))
	err = root.Execute()
	os.Stdout = saved
	childOut.Close()
	if err != nil {
		t.Fatalf("clrspy heap: %v", err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var d report.HeapDocument
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	// AllocationSampled (.NET 10) names nested types without their
	// declaring type, AllocationTick with it.
	name := func(s string) string { return s[strings.LastIndexAny(s, ".+")+1:] }
	types := map[string]report.HeapTypeJSON{}
	for _, ty := range d.Types {
		types[name(ty.Type)] = ty
	}
	long, short := types["LongLived"], types["ShortLived"]
	t.Logf("gcs %d tracked %d; LongLived %+v; ShortLived %+v; contradictions %+v; notes %v",
		d.GCs, d.TrackedObjects, long, short, d.Contradictions, d.Notes)
	if long.Decided < 100 || short.Decided < 100 {
		t.Fatalf("too few decided samples: LongLived %d, ShortLived %d", long.Decided, short.Decided)
	}
	if diff := long.SurvivedOneGCPct - 50; diff > 5 || diff < -5 {
		t.Errorf("LongLived survived one GC: %.1f%%, truth 50%%", long.SurvivedOneGCPct)
	}
	if short.SurvivedOneGCPct > 2 {
		t.Errorf("ShortLived survived one GC: %.1f%%, truth 0%%", short.SurvivedOneGCPct)
	}
	if d.Contradictions.Total != 0 {
		t.Errorf("contradictions %+v", d.Contradictions)
	}
	// The kept LongLived objects survived many GCs; each must die at the
	// induced GC after the release. The workload's JSON line says which.
	stdout, err := os.ReadFile(childOut.Name())
	if err != nil {
		t.Fatal(err)
	}
	res, err := workload.ParseResult(stdout)
	if err != nil {
		t.Fatalf("workload result: %v (stdout %q)", err, stdout)
	}
	var releaseGC int
	var shortN, longN float64
	if err := res.Get("releaseGC", &releaseGC); err != nil {
		t.Fatal(err)
	}
	if res.Get("shortLived", &shortN) != nil || res.Get("longLived", &longN) != nil {
		t.Fatalf("workload result lacks counts: %s", stdout)
	}
	// The upscaled estimates must find the allocated counts again.
	for _, c := range []struct {
		g     report.HeapTypeJSON
		truth float64
	}{{long, longN}, {short, shortN}} {
		if r := c.g.EstObjects / c.truth; r < 0.85 || r > 1.15 {
			t.Errorf("%s: estimated %.0f objects, allocated %.0f", c.g.Type, c.g.EstObjects, c.truth)
		}
	}
	kept, atRelease, elsewhere := 0, 0, 0
	for _, o := range d.Objects {
		if name(o.Type) != "LongLived" || o.GCsSurvived < 3 {
			continue
		}
		kept++
		switch {
		case !o.Alive && o.DeathGC >= releaseGC && o.DeathGC <= releaseGC+1:
			atRelease++
		default:
			elsewhere++
		}
	}
	t.Logf("release GC %d: %d long-held objects, %d died at it, %d elsewhere", releaseGC, kept, atRelease, elsewhere)
	if kept < 50 || elsewhere != 0 {
		t.Errorf("%d long-held LongLived samples, %d not dead within one GC of the release GC %d", kept, elsewhere, releaseGC)
	}
}
