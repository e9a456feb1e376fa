package locks

import (
	"errors"
	"io"
	"os"
	"testing"

	"github.com/clrspy/clrspy/nettrace"
)

const traces = "../../shared/traces/"

// analyze runs a whole trace file through the analyzer.
func analyze(t testing.TB, name string) (*Analyzer, *nettrace.Reader) {
	t.Helper()
	f, err := os.Open(traces + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := nettrace.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	a := New(r.Header())
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		var te *nettrace.TruncatedError
		if errors.As(err, &te) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		a.Add(ev)
	}
	return a, r
}

func TestZZDump(t *testing.T) {
	for _, n := range []string{"filtrace__contention.nettrace", "perfview__eventpipe-dotnetcore3.0-win-x64-objver4.nettrace", "diagnostics__trace.nettrace"} {
		a, _ := analyze(t, n)
		r := a.Result(nil)
		t.Logf("%s: %+v kind=%s notes=%q", n, r.Summary, r.OwnerKind, r.Notes)
		for _, l := range r.Locks {
			t.Logf("  lock %#x obj %#x %q n=%d tot=%d max=%d hist=%v wait=%d", l.ID, l.Object, l.ObjectType, l.Contentions, l.TotalNs, l.MaxNs, l.Histogram, l.Waiting)
			for _, o := range l.Owners {
				t.Logf("    owner %+v", o)
			}
			for _, s := range l.Stacks {
				t.Logf("    stack %+v depth %d", s, len(r.Stacks[s.Stack].IPs))
			}
		}
		for _, th := range r.Threads {
			t.Logf("  thread %+v", th)
		}
		for _, w := range r.StillWaiting {
			t.Logf("  waiting %+v", w)
		}
	}
}
