package gcpause

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/clrspy/clrspy/clrevents"
)

// TestGCRowJSON: the row's JSON has clrspy gc --json's keys, the type and
// reason by name, unknown values as null; it reads back to the same row
// (a spooled row is read back so), and the row is made without
// allocating (one per GC on the live monitor's path).
func TestGCRowJSON(t *testing.T) {
	g := &GC{Index: 3, Number: 7, Generation: 2, Type: clrevents.GCBackground, Reason: clrevents.ReasonInduced, Induced: true,
		Complete: true, StartSeen: true, StartNanos: 2_500_000, PauseStartNanos: 2_000_000, PauseEndNanos: 9_000_000,
		PauseStartUTC: time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC), SuspendNanos: 125_000, PauseNanos: 7_000_000,
		DurationNanos: -1, PauseRuntimeNanos: 6_500_000, Pauses: 2, PausePercentSinceLastGC: 12.5,
		HasHeapStats: true, Heaps: 1}
	g.HeapStats.GenerationSize = [5]uint64{1_000_000, 2_000_000, 30_000_001, 4_000_000, 0}
	g.HeapStats.PinnedObjectCount = 5
	r := NewGCRow(g)
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, want := range []string{`"index":3,"number":7,"generation":2,"gen":"2BI","type":"Background","reason":"Induced",`,
		`"pause_start_ms":2,"pause_start_utc":"2026-12-03T08:00:00Z","gc_start_ms":2.5,"pause_end_ms":9,"suspend_ms":0.125,"pause_ms":7,`,
		`"pause_runtime_ms":6.5,"pauses":2,"gc_duration_ms":null,"pause_time_percent":12.5,"gen0_alloc_mb":null,"peak_mb":null,`,
		`"gen_size_mb":[1,2,30.000001,4,null],"survival_percent":[null,null,null,null,null]`, `"pinned_objects":5,`, `"heaps":1}`} {
		if !strings.Contains(s, want) {
			t.Errorf("row JSON %s\nlacks %s", s, want)
		}
	}
	var back GCRow
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, r) {
		t.Errorf("read back %+v (%v), want %+v", back, err, r)
	}
	if n := testing.AllocsPerRun(100, func() { r = NewGCRow(g) }); n != 0 {
		t.Errorf("NewGCRow: %v allocations", n)
	}
	if err := json.Unmarshal([]byte(`{"type":"Sideways"}`), &back); err == nil || !strings.Contains(err.Error(), `unknown GC type "Sideways"`) {
		t.Errorf("a bad type: %v", err)
	}
	if err := json.Unmarshal([]byte(`{"reason":"Reason99"}`), &back); err != nil || back.Reason != 99 {
		t.Errorf("reason 99: %v, %d", err, back.Reason)
	}
}

// TestSuspensionRowJSON: gc --json's suspension keys, the reason by name,
// a missing SuspendEEEnd as null.
func TestSuspensionRowJSON(t *testing.T) {
	r := NewSuspensionRow(&Suspension{Reason: clrevents.SuspendForDebugger, ThreadID: 42, StartNanos: 1_500_000,
		StartUTC: time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC), SuspendNanos: -1, PauseNanos: 300_000_000, Incomplete: true})
	b, _ := json.Marshal(r)
	want := `{"reason":"SuspendForDebugger","start_ms":1.5,"start_utc":"2026-12-03T08:00:00Z","thread_id":42,"suspend_ms":null,"pause_ms":300,"incomplete":true}`
	if string(b) != want {
		t.Errorf("%s\nwant %s", b, want)
	}
	var back SuspensionRow
	if err := json.Unmarshal(b, &back); err != nil || back != r {
		t.Errorf("read back %+v (%v), want %+v", back, err, r)
	}
}

// TestOptJSON: an Opt is written as encoding/json writes a float64 (no
// exponent below 1e21), null when unknown.
func TestOptJSON(t *testing.T) {
	for _, c := range []struct {
		v    Opt
		want string
	}{{Unknown, "null"}, {OptOf(-3), "null"}, {0, "0"}, {123456789, "123456789"}, {OptOf(0.0000004), "0"}, {1e-7, "1e-7"}, {1e21, "1e+21"}} {
		b, _ := json.Marshal(c.v)
		if want, _ := json.Marshal(float64(c.v)); c.v.Valid() && string(b) != string(want) {
			t.Errorf("%v: %s, encoding/json %s", float64(c.v), b, want)
		}
		if string(b) != c.want {
			t.Errorf("%v: %s, want %s", float64(c.v), b, c.want)
		}
	}
}
