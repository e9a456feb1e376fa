//go:build compat

package heapgraph

import (
	"testing"

	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/nettrace"
)

// TestRememberCalendar reads the compatibility suite's one third-party
// heap dump (RememberCalendar__trace.nettrace, a Windows app's snapshot
// with COM wrappers and ref-counted handles): complete, every object
// reached from a reported root, and the root retaining every byte.
func TestRememberCalendar(t *testing.T) {
	r := tracetest.OpenCompat(t, "RememberCalendar__trace.nettrace", nettrace.NewReader)
	b := NewBuilder(r.Header(), nil)
	if err := tracetest.ReadAll(t, r, b.Event); err != nil {
		t.Fatal(err)
	}
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	if err := g.CheckValid(); err != nil {
		t.Error(err)
	}
	kinds := map[RootKind]int{}
	for _, r := range g.Roots {
		kinds[r.Kind]++
	}
	t.Logf("%d objects, %d bytes, roots %v, COM %d, pause %v", g.N, g.Bytes, kinds, g.COM, g.Pause)
	if !g.Complete() || g.Missing.Unrooted != 0 || g.N != 6390 || g.Retained[g.N] != g.Bytes {
		t.Errorf("%d objects, missing %+v, root retains %d of %d", g.N, g.Missing, g.Retained[g.N], g.Bytes)
	}
	if kinds[RootStatic] == 0 || kinds[RootRefCounted] == 0 || kinds[RootFinalizer] == 0 {
		t.Errorf("root kinds %v", kinds)
	}
}
