//go:build compat

package clrevents

import (
	"testing"

	"github.com/clrspy/clrspy/nettrace"
)

// Every runtime and rundown event type (and version) of the compatibility
// suite (.NET Core 2.1 to .NET 9) has, in the trace's metadata, the
// keywords and level of its row here: 109 of them.
func TestCompatManifestMatches(t *testing.T) {
	seen := map[string]bool{}
	eachCompatEvent(t, func(file string, ev *nettrace.Event) { checkManifest(t, seen, file, ev) })
	if len(seen) < 109 {
		t.Errorf("%d event types checked; want at least 109 (the suite changed?)", len(seen))
	}
}
