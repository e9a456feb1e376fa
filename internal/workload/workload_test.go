package workload

import (
	"testing"
	"time"
)

// The workload itself must produce what the issue asks of it: GCs of every
// generation and LOH allocations from churn, exactly the induced counts,
// and a CPU ratio near 3:1.
func TestChurnAndInduced(t *testing.T) {
	p := Start(t, nil, "churn", "iterations=3000")
	r, err := p.Wait(60 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if r.Mode != "churn" || r.Pid != p.Pid {
		t.Fatalf("mode %q pid %d, want churn %d", r.Mode, r.Pid, p.Pid)
	}
	if r.Gen0 < 1 || r.Gen1 < 1 || r.Gen2 < 1 {
		t.Errorf("churn collections gen0 %d gen1 %d gen2 %d: want each ≥ 1", r.Gen0, r.Gen1, r.Gen2)
	}
	if got := r.Int("lohAllocations"); got != 60 {
		t.Errorf("lohAllocations = %d, want 60 (3000 iterations / 50)", got)
	}
	if r.Int("iterations") != 3000 {
		t.Errorf("iterations = %d", r.Int("iterations"))
	}

	p = Start(t, []string{"DOTNET_gcServer=1", "DOTNET_GCHeapCount=2"}, "induced", "gen0=1", "gen1=2", "gen2=3", "sleepMs=0")
	r, err = p.Wait(60 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !r.ServerGC {
		t.Errorf("DOTNET_gcServer=1 did not give server GC")
	}
	// Collecting gen N counts for every generation ≤ N; the GC may escalate
	// an induced gen1 to gen2 (it does for the first one here), never the
	// other way.
	if r.Gen0 != 6 || r.Gen1 != 5 || r.Gen2 < 3 || r.Gen2 > 5 {
		t.Errorf("induced counts gen0 %d gen1 %d gen2 %d, want 6, 5 and 3..5", r.Gen0, r.Gen1, r.Gen2)
	}
	if fb, ok := r.GCInfo["FullBlocking"]; !ok || fb.Generation != 2 || fb.Index != 6 {
		t.Errorf("FullBlocking info %+v, want generation 2 index 6", fb)
	}
}

func TestParseResult(t *testing.T) {
	r, err := ParseResult([]byte("noise\n{\"mode\":\"cpu\",\"gen0\":3,\"work\":{\"ratio\":3}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Mode != "cpu" || r.Gen0 != 3 || r.Int("ratio") != 3 {
		t.Fatalf("parsed %+v", r)
	}
	if _, err := ParseResult([]byte("nothing")); err == nil {
		t.Fatal("no error for output without a result line")
	}
}
