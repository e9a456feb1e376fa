package clrevents

import (
	"errors"
	"fmt"
	"sort"
	"testing"

	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/nettrace"
)

// The runtime writes each event's keywords and level into the trace's
// metadata: every runtime and rundown event of the fixtures (.NET 10,
// recorded by clrspy) has the keywords and level of its row here.
func TestManifestMatchesFixtures(t *testing.T) {
	seen := map[string]bool{}
	for _, name := range tracetest.Fixtures(t) {
		r := tracetest.Open(t, name, nettrace.NewReader)
		err := tracetest.ReadAll(t, r, func(ev *nettrace.Event) { checkManifest(t, seen, name, ev) })
		if err != nil && !errors.Is(err, nettrace.ErrTruncated) {
			t.Fatal(name, err)
		}
	}
	// The fixtures hold 57 runtime and rundown event types and versions
	// (more when fixtures are added).
	if len(seen) < 57 {
		var ks []string
		for k := range seen {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		t.Errorf("%d event types checked, want at least 57: %v", len(ks), ks)
	}
}

// checkManifest checks a runtime or rundown event of trace file against
// its row: the keywords and level the runtime wrote in its metadata are
// the row's. Each event type and version is checked once (seen, by key).
func checkManifest(t *testing.T, seen map[string]bool, file string, ev *nettrace.Event) {
	t.Helper()
	m := ev.Meta
	if m.Runtime != nettrace.Runtime && m.Runtime != nettrace.Rundown {
		return
	}
	s := Lookup(m.Runtime, m.EventID)
	k := fmt.Sprintf("%v %d v%d %s", m.Runtime, m.EventID, m.Version, m.Name)
	if s == nil || seen[k] {
		return
	}
	seen[k] = true
	if m.Keywords != s.Keywords() || m.Level != s.Level() {
		t.Errorf("%s (%s): the runtime wrote keywords 0x%X level %d; the table has 0x%X level %d",
			k, file, m.Keywords, m.Level, s.Keywords(), s.Level())
	}
}
