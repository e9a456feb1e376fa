package fleet

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// TestSeedAgesInHelp holds dotnet_gc_collections_total's HELP text (the
// metrics package's golden exposition) to the ages serve seeds at: the
// meter asked for at the attach from meterMinAge, the second session at
// seedMinAge.
func TestSeedAgesInHelp(t *testing.T) {
	b, err := os.ReadFile("../metrics/testdata/exposition.txt")
	if err != nil {
		t.Fatal(err)
	}
	var help string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "# HELP dotnet_gc_collections_total ") {
			help = l
		}
	}
	secs := func(d interface{ Seconds() float64 }) string { return fmt.Sprintf("%g s", d.Seconds()) }
	for _, want := range []string{
		"ran at least " + secs(meterMinAge),
		"once younger ones have run " + secs(seedMinAge),
		"attached younger than " + secs(meterMinAge) + " until it is " + secs(seedMinAge) + " old",
	} {
		if !strings.Contains(help, want) {
			t.Errorf("dotnet_gc_collections_total's HELP lacks %q:\n%s", want, help)
		}
	}
}

// TestMemWatchDemand: clrspy_findings' CPU demand is triage's formula over
// the readings kept: 15 s of threads' CPU time in 10 s on 2 cores is 75 %;
// the oldest reading leaves past maxMemorySamples; one reading says
// nothing (-1).
func TestMemWatchDemand(t *testing.T) {
	var w memWatch
	t0 := time.Unix(1000, 0)
	w.addCPU(t0, 0)
	if got := w.demandPct(2); got != -1 {
		t.Errorf("one reading: %v, want -1", got)
	}
	w.addCPU(t0.Add(10*time.Second), 15e9)
	if got := w.demandPct(2); got != 75 {
		t.Errorf("15 s of CPU in 10 s on 2 cores: %v %%, want 75", got)
	}
	// maxMemorySamples more readings at 1 s of CPU per second: the first
	// two leave, the span is one core's worth.
	for i := range maxMemorySamples {
		w.addCPU(t0.Add(time.Duration(11+i)*time.Second), 15e9+int64(i+1)*1e9)
	}
	if len(w.cpu) != maxMemorySamples {
		t.Fatalf("%d readings kept, want %d", len(w.cpu), maxMemorySamples)
	}
	if got := w.demandPct(2); got != 50 {
		t.Errorf("1 s of CPU per second on 2 cores: %v %%, want 50", got)
	}
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
