package metrics

import (
	"strings"
	"testing"

	"github.com/clrspy/clrspy/internal/monitor"
)

// TestTotalsKnownShort: a target whose GC events' numbering says 95 GCs
// came before the session, with no word yet of what the runtime counted
// (monitor.BeforeSession), exports no GC total (collections, pause time):
// they would be knowably short. Seeded, the totals are the seed plus the
// session's.
func TestTotalsKnownShort(t *testing.T) {
	src := goldenSource(t)
	wks := &src.ts[0]
	wks.Snapshot.GC.BeforeSession = nil
	wks.Snapshot.GC.NumberedBefore = 95
	reg, err := newRegistry(src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	lines := func() map[string]string {
		got := map[string]string{}
		for _, l := range strings.Split(string(scrape(t, Handler(reg), "")), "\n") {
			if strings.Contains(l, `pid="101"`) {
				sp := strings.LastIndexByte(l, ' ')
				got[l[:sp]] = l[sp+1:]
			}
		}
		return got
	}
	has := func(m map[string]string, name string) bool {
		for k := range m {
			if strings.HasPrefix(k, name+"{") {
				return true
			}
		}
		return false
	}
	short := lines()
	for _, f := range []string{"dotnet_gc_collections_total", "dotnet_gc_pause_time_seconds_total", "clrspy_gc_pause_runtime_seconds_total"} {
		if has(short, f) {
			t.Errorf("%s exported for a session 95 GCs short", f)
		}
	}
	// The rest of the target's figures stay.
	if !has(short, "clrspy_gc_pause_seconds_count") || !has(short, "clrspy_gc_promoted_bytes_total") {
		t.Errorf("the target's other GC families went too: %d series", len(short))
	}
	// Seeded (95 = 60 + 25 + 10): the fixture's 27/8/5 on top.
	wks.Snapshot.GC.BeforeSession = &monitor.BeforeSession{Generations: [3]int{60, 25, 10}, PauseRuntimeMS: 100}
	seeded := lines()
	if len(seeded) != len(short)+5 {
		t.Errorf("%d series seeded, %d short: want the 3 collections and 2 pause totals more", len(seeded), len(short))
	}
	for gen, want := range map[string]string{"gen0": "87", "gen1": "33", "gen2": "15"} {
		k := `dotnet_gc_collections_total{dotnet_gc_heap_generation="` + gen + `",pid="101",process="Workload"}`
		if seeded[k] != want {
			t.Errorf("%s = %q, want %s", k, seeded[k], want)
		}
	}
}
