package exceptions

import (
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/internal/traceevent"
	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/nettrace"
)

// equalTraceEvent reads the trace at path with clrspy (clrevents'
// decoders, then the analysis) and with TraceEvent (its exceptions mode),
// and requires the same exception events in the same order with the same
// decoded fields, and the analysis' counts per type and catch site to be
// TraceEvent's. It returns the analysis.
func equalTraceEvent(t *testing.T, path string) *Result {
	t.Helper()
	te := traceevent.Exceptions(t, path)
	if te.Error != "" {
		t.Fatalf("TraceEvent: %s", te.Error)
	}
	r := tracetest.OpenFile(t, path, nettrace.NewReader)
	a := New(r.Header(), Options{})
	var got []traceevent.ExceptionEvent
	if err := tracetest.ReadAll(t, r, func(ev *nettrace.Event) {
		a.Event(ev)
		m := ev.Meta
		if m.Runtime != nettrace.Runtime {
			return
		}
		e := traceevent.ExceptionEvent{TID: ev.ThreadID}
		switch m.EventID {
		case clrevents.IDExceptionThrown:
			x, err := clrevents.DecodeExceptionThrown(ev.Payload, m.Version, 8)
			if err != nil {
				t.Fatal(err)
			}
			e.Kind, e.Type, e.Message, e.EIP, e.HResult, e.Flags = "thrown", x.Type, x.Message, x.EIP, int32(x.HResult), x.Flags
		case clrevents.IDExceptionCatchStart, clrevents.IDExceptionFinallyStart, clrevents.IDExceptionFilterStart:
			x, err := clrevents.DecodeExceptionHandling(ev.Payload, m.Version, 8)
			if err != nil {
				t.Fatal(err)
			}
			e.Kind = map[uint32]string{clrevents.IDExceptionCatchStart: "catch", clrevents.IDExceptionFinallyStart: "finally", clrevents.IDExceptionFilterStart: "filter"}[m.EventID]
			e.EntryEIP, e.MethodID, e.MethodName = x.EntryEIP, x.MethodID, x.MethodName
		case clrevents.IDExceptionCatchStop:
			e.Kind = "catch_stop"
		case clrevents.IDExceptionFinallyStop:
			e.Kind = "finally_stop"
		case clrevents.IDExceptionFilterStop:
			e.Kind = "filter_stop"
		case clrevents.IDExceptionThrownStop:
			e.Kind = "thrown_stop"
		default:
			return
		}
		got = append(got, e)
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(te.Events) {
		t.Fatalf("clrspy decoded %d exception events, TraceEvent %d", len(got), len(te.Events))
	}
	diffs := 0
	for i := range got {
		if got[i] != te.Events[i] {
			if diffs++; diffs <= 5 {
				t.Errorf("event %d:\nclrspy     %+v\nTraceEvent %+v", i, got[i], te.Events[i])
			}
		}
	}
	if diffs > 0 {
		t.Fatalf("%d of %d events differ", diffs, len(got))
	}
	// The analysis against TraceEvent's events: thrown per type, caught
	// per (type, catch method) by pairing on the thread as the analysis
	// does for non-nested exceptions.
	types, catches := map[string]int64{}, map[string]int64{}
	last := map[uint64]string{}
	for _, e := range te.Events {
		switch e.Kind {
		case "thrown":
			types[e.Type]++
			last[e.TID] = e.Type
		case "catch":
			catches[last[e.TID]+" in "+CatchName(e.MethodName)]++
		}
	}
	res := a.Result()
	if err := res.CheckValid(); err != nil {
		t.Error(err)
	}
	var thrown int64
	for _, ty := range res.Types {
		thrown += ty.Count
		if ty.Count != types[ty.Name] {
			t.Errorf("%s: %d, TraceEvent %d", ty.Name, ty.Count, types[ty.Name])
		}
		for _, c := range ty.CatchSites {
			if k := ty.Name + " in " + c.Site; c.Count != catches[k] {
				t.Errorf("%s: %d, TraceEvent %d", k, c.Count, catches[k])
			}
			delete(catches, ty.Name+" in "+c.Site)
		}
	}
	if int(thrown) != int(res.Thrown) || len(res.Types) != len(types) || len(catches) != 0 {
		t.Errorf("thrown %d of %d types; TraceEvent %v, catches not found %v", res.Thrown, len(res.Types), types, catches)
	}
	return res
}

// TestExceptionsEqualTraceEvent holds the claim on the fixture (gunzipped
// for TraceEvent): 800 exception events, every field equal.
func TestExceptionsEqualTraceEvent(t *testing.T) {
	src, err := os.Open(tracetest.Path(t, fixture))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	z, err := gzip.NewReader(src)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "exceptions.nettrace")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(f, z); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	res := equalTraceEvent(t, path)
	if got := fmt.Sprint(res.Thrown, res.Caught, res.Finallys, res.Filters); got != "160 160 40 40" {
		t.Errorf("thrown, caught, finallys, filters: %s", got)
	}
}
