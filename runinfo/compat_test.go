//go:build compat

package runinfo

import (
	"testing"

	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/nettrace"
)

// A trace without these events (a third-party .NET Core 3.0 recording)
// says nothing rather than guessing.
func TestTraceWithoutInfo(t *testing.T) {
	info, used := read(t, tracetest.OpenCompat(t, "perfview__eventpipe-dotnetcore3.0-win-x64-objver4.nettrace", nettrace.NewReader))
	if used != 0 || info != (Info{}) {
		t.Errorf("used %d, info %+v", used, info)
	}
}
