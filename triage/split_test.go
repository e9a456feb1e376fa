package triage

import (
	"strings"
	"testing"

	"github.com/clrspy/clrspy/memory"
)

// splits are n samples a second apart whose native heap grows by
// nativeMB a second and whose GC heap by gcMB, over an 80 MiB RSS.
func splits(n int, nativeMB, gcMB float64) []memory.Sample {
	var ss []memory.Sample
	for i := 0; i < n; i++ {
		native := uint64(10<<20) + uint64(float64(i)*nativeMB*(1<<20))
		gc := uint64(30<<20) + uint64(float64(i)*gcMB*(1<<20))
		other := uint64(40 << 20)
		parts := make([]memory.Part, len(memory.Kinds))
		for j, k := range memory.Kinds {
			parts[j].Kind = k
			switch k {
			case memory.NativeHeap:
				parts[j].Bytes = native
			case memory.GCHeap:
				parts[j].Bytes = gc
			case memory.Images:
				parts[j].Bytes = other
			}
		}
		ss = append(ss, memory.Sample{AtNs: int64(i) * 1e9, Split: memory.Split{Rss: native + gc + other, Parts: parts}})
	}
	return ss
}

func memoryFindings(f *Facts) []Finding {
	var out []Finding
	for _, x := range Findings(f) {
		if x.Area == AreaMemory {
			out = append(out, x)
		}
	}
	return out
}

// TestSplitNativeGrowth: a native heap growing 5 MiB/s (300 MB/min) with
// the GC heap flat is a critical memory finding worded as clrspy memory
// words it, whose next command is clrspy memory.
func TestSplitNativeGrowth(t *testing.T) {
	ss := splits(11, 5, 0)
	f := &Facts{Target: "--pid 42", WindowSec: 10}
	f.Memory.Split = SplitOf(ss, 0, 0)
	fs := memoryFindings(f)
	if len(fs) != 1 {
		t.Fatalf("memory findings %+v, want one", fs)
	}
	x := fs[0]
	want := "RSS +50.0 MiB in 10 s: native heap grows 5.0 MiB/s (+50.0 MiB) while the GC heap is flat"
	if x.Severity != Critical || x.Rule != "memory.resident_growth_mb_per_min" || x.Title != want || x.Title != memory.JudgeGrowth(ss) {
		t.Errorf("finding %s %s %q, want critical memory.resident_growth_mb_per_min %q", x.Severity, x.Rule, x.Title, want)
	}
	if x.Next != "clrspy memory --pid 42 --native --duration 60s" {
		t.Errorf("next %q, want memory --native (the native heap grows)", x.Next)
	}
	if x.Evidence["growing_kind"] != "native_heap" || x.Evidence["growing_mb_per_min"] != 300.0 || x.Evidence["gc_heap_delta_mb"] != 0.0 {
		t.Errorf("evidence %v", x.Evidence)
	}
}

// TestSplitCalm: flat parts are one info finding, as is a GC heap that
// grows (the old generations' rule judges the GC heap); a small native
// growth (under MinResidentGrowthMB) is not judged.
func TestSplitCalm(t *testing.T) {
	for _, c := range []struct {
		name        string
		native, gc  float64
		wantInTitle string
	}{
		{"flat", 0, 0, "RSS +0.0 MiB in 10 s: flat, no part grows"},
		{"gc heap grows", 0, 5, "GC heap grows 5.0 MiB/s"},
		{"small native growth", 1.2, 0, "native heap grows 1.2 MiB/s (+12.0 MiB)"},
	} {
		f := &Facts{Target: "--pid 42", WindowSec: 10}
		f.Memory.Split = SplitOf(splits(11, c.native, c.gc), 0, 0)
		fs := memoryFindings(f)
		if len(fs) != 1 || fs[0].Severity != Info || !strings.HasPrefix(fs[0].Title, "memory steady: ") || !strings.Contains(fs[0].Title, c.wantInTitle) {
			t.Errorf("%s: %+v, want one info finding with %q", c.name, fs, c.wantInTitle)
		}
	}
}

// TestSplitCgroupLimit: 90 % of the cgroup's limit is a warning, 96 % a
// critical one, in clrspy memory's wording; 50 % is info.
func TestSplitCgroupLimit(t *testing.T) {
	ss := splits(3, 0, 0)
	for _, c := range []struct {
		usageMB uint64
		sev     Severity
		title   string
	}{
		{180, Warning, "90 % of the cgroup's memory limit (180.0 MiB of 200.0 MiB)"},
		{192, Critical, "96 % of the cgroup's memory limit (192.0 MiB of 200.0 MiB)"},
		{100, Info, ""},
	} {
		f := &Facts{Target: "--pid 42", WindowSec: 2}
		f.Memory.Split = SplitOf(ss, 200<<20, c.usageMB<<20)
		fs := memoryFindings(f)
		if len(fs) != 1 || fs[0].Severity != c.sev {
			t.Fatalf("usage %d MiB: %+v, want one %s finding", c.usageMB, fs, c.sev)
		}
		if c.sev != Info && fs[0].Next != "clrspy memory --pid 42 --duration 60s" {
			t.Errorf("usage %d MiB: next %q, want memory without --native (no part grows)", c.usageMB, fs[0].Next)
		}
		if c.sev != Info && (fs[0].Title != c.title || fs[0].Rule != "memory.cgroup_limit_pct") {
			t.Errorf("usage %d MiB: %q (%s), want %q", c.usageMB, fs[0].Title, fs[0].Rule, c.title)
		}
		if c.sev == Info && !strings.Contains(fs[0].Title, "50 % of the cgroup's memory limit") {
			t.Errorf("usage %d MiB: %q", c.usageMB, fs[0].Title)
		}
	}
}
