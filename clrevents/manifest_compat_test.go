//go:build compat

package clrevents

import (
	"fmt"
	"testing"

	"github.com/clrspy/clrspy/nettrace"
)

// Every runtime and rundown event type (and version) of the compatibility
// suite (.NET Core 2.1 to .NET 9) has, in the trace's metadata, the
// keywords and level of its row here: 109 of them.
func TestCompatManifestMatches(t *testing.T) {
	seen := map[string]bool{}
	eachCompatEvent(t, func(file string, ev *nettrace.Event) {
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
	})
	if len(seen) < 109 {
		t.Errorf("%d event types checked; want at least 109 (the suite changed?)", len(seen))
	}
}
