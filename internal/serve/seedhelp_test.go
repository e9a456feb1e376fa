package serve

import (
	"fmt"
	"os"
	"strings"
	"testing"
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
