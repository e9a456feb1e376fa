package stacksnap

import (
	"testing"

	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/hang"
	"github.com/clrspy/clrspy/source"
)

// TestTargetPausedIsGcpausePairing: what a stacks snapshot says the
// sampling cost the target is package gcpause's pairing of the
// suspensions, not a pairing of its own: on the composite fixture (GCs and
// the sample profiler's suspensions) the count, total and
// longest equal gcpause's rollup by reason of the same stream's
// suspensions that ended.
func TestTargetPausedIsGcpausePairing(t *testing.T) {
	st, err := source.Open(source.Spec{File: "../../testdata/traces/composite.nettrace"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	j := New(st, hangOptions(), 0)
	gc := gcpause.New(st.Header(), gcpause.Options{})
	if _, err := st.Run(append(j.Analyzers(), gc)...); err != nil {
		t.Fatal(err)
	}
	p := j.Result(0).TargetPaused
	var n int
	var total, longest int64
	for _, r := range gc.Result().ByReason {
		n += r.Count - r.Incomplete
		total += r.TotalNanos
		longest = max(longest, r.MaxNanos)
	}
	t.Logf("target paused %+v", p)
	if p.Count < 10 || p.Count != n || p.TotalMs != float64(total)/1e6 || p.MaxMs != float64(longest)/1e6 {
		t.Errorf("target paused %+v, gcpause: %d suspensions, %d ns, longest %d ns", p, n, total, longest)
	}
}

func hangOptions() hang.Options { return hang.Options{} }
