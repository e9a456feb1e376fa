//go:build compat

package heap

import (
	"testing"

	"github.com/clrspy/clrspy/internal/tracetest"
)

// objver4 (35,458 AllocationTick samples, at most 120 alive at once) joins
// the reservoir test with the compatibility suite.
func init() {
	reservoirCases = append(reservoirCases, reservoirCase{"objver4", func(tb testing.TB) string {
		return tracetest.CompatPath(tb, "perfview__eventpipe-dotnetcore3.0-win-x64-objver4.nettrace")
	}, []int{16, 32, 64}})
}
