package heap

import (
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/clrspy/clrspy/nettrace"
)

var update = flag.Bool("update", false, "rewrite golden files")

const traces = "../../shared/traces"

// replay runs a whole trace file through a Tracker.
func replay(tb testing.TB, name string) *Result {
	tb.Helper()
	f, err := os.Open(filepath.Join(traces, name))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	r, err := nettrace.NewReader(f)
	if err != nil {
		tb.Fatal(err)
	}
	tr := New(r.Header())
	for {
		ev, err := r.Next()
		if err != nil {
			var te *nettrace.TruncatedError
			if errors.Is(err, io.EOF) || errors.As(err, &te) {
				break
			}
			tb.Fatal(err)
		}
		tr.Event(ev)
	}
	tr.Finish()
	return tr.Result()
}

// summary is what the golden file records per trace.
type summary struct {
	GCs              int
	GCsWithoutRanges int
	RangeEvents      int
	MovedRanges      int
	SurvivingRanges  int
	AllocationTicks  int
	Untracked        int
	Tracked          int
	Remapped         int // object moves summed over GCs
	InPlace          int
	Dead             int
	AliveAtEnd       int
	ReachedGen2      int
	GenCorrections   int
	GenConfirmed     int
	DecodeErrors     int
	CorruptEvents    int
	Contradictions   Contradictions
}

func summarize(r *Result) summary {
	s := summary{GCs: len(r.GCs), GCsWithoutRanges: r.Stats.GCsWithoutRanges, RangeEvents: r.Stats.RangeEvents,
		MovedRanges: r.Stats.MovedRanges, SurvivingRanges: r.Stats.SurvivingRanges,
		AllocationTicks: r.Stats.AllocationTicks, Untracked: r.Stats.Untracked, Tracked: r.Stats.Tracked,
		GenCorrections: r.Stats.GenCorrections, GenConfirmed: r.Stats.GenConfirmed, DecodeErrors: r.Stats.DecodeErrors, CorruptEvents: r.Stats.CorruptRangeEvents, Contradictions: r.Stats.Contradictions}
	for _, g := range r.GCs {
		s.Remapped += g.Remapped
		s.InPlace += g.InPlace
	}
	for _, o := range r.Objects {
		if o.Alive {
			s.AliveAtEnd++
		} else {
			s.Dead++
		}
		if o.MaxGen >= Gen2 {
			s.ReachedGen2++
		}
	}
	return s
}

// movementTraces are the real traces with GCBulkMoved/SurvivingObjectRanges.
var movementTraces = []string{
	"perfview__eventpipe-dotnetcore3.0-win-x64-objver4.nettrace",
	"diagnostics__trace.nettrace",
	"filtrace__contention.nettrace",
	"filtrace__wait.nettrace",
	"filtrace__threadpool.nettrace",
	"filtrace__exceptions.nettrace",
	"filtrace__activity.nettrace",
	"RememberCalendar__trace.nettrace",
}

// TestRealTraces replays every real trace with movement events: none may
// show a contradiction, and the counts of remapped and dead sampled objects
// are kept in testdata/real_traces.golden.json.
func TestRealTraces(t *testing.T) {
	got := map[string]summary{}
	for _, name := range movementTraces {
		r := replay(t, name)
		s := summarize(r)
		got[name] = s
		if s.Contradictions.Total() != 0 {
			t.Errorf("%s: contradictions %+v", name, s.Contradictions)
		}
		if s.DecodeErrors != 0 {
			t.Errorf("%s: %d decode errors, first: %s", name, s.DecodeErrors, r.Stats.FirstDecodeError)
		}
	}
	golden := filepath.Join("testdata", "real_traces.golden.json")
	b, _ := json.MarshalIndent(got, "", "  ")
	b = append(b, '\n')
	if *update {
		if err := os.WriteFile(golden, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if string(want) != string(b) {
		t.Errorf("replay differs from %s:\n%s", golden, b)
	}
}
