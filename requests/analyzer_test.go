package requests

import (
	"encoding/binary"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/nettrace"
)

// A synthetic stream (1 tick = 1 ns): Kestrel's events with their field
// lists, as an ASP.NET Core 10 trace declares them.

var kestrelFields = []nettrace.Field{{Name: "connectionId", Type: nettrace.FieldType{Code: nettrace.TypeString}},
	{Name: "requestId", Type: nettrace.FieldType{Code: nettrace.TypeString}},
	{Name: "httpVersion", Type: nettrace.FieldType{Code: nettrace.TypeString}},
	{Name: "path", Type: nettrace.FieldType{Code: nettrace.TypeString}},
	{Name: "method", Type: nettrace.FieldType{Code: nettrace.TypeString}}}

var (
	kStart = &nettrace.Metadata{Provider: clrevents.ProviderKestrel, EventName: "RequestStart", EventID: 3, HasFields: true, Fields: kestrelFields}
	kStop  = &nettrace.Metadata{Provider: clrevents.ProviderKestrel, EventName: "RequestStop", EventID: 4, HasFields: true, Fields: kestrelFields}
	susp   = &nettrace.Metadata{Runtime: nettrace.Runtime, EventID: clrevents.IDGCSuspendEEBegin}
	rest   = &nettrace.Metadata{Runtime: nettrace.Runtime, EventID: clrevents.IDGCRestartEEEnd}
)

func utf16z(ss ...string) []byte {
	var b []byte
	for _, s := range ss {
		for _, u := range utf16.Encode([]rune(s)) {
			b = binary.LittleEndian.AppendUint16(b, u)
		}
		b = append(b, 0, 0)
	}
	return b
}

func kestrel(m *nettrace.Metadata, ts int64, thread uint64, id, path string) *nettrace.Event {
	return &nettrace.Event{Meta: m, Timestamp: ts, ThreadID: thread, Payload: utf16z("c", id, "HTTP/1.1", path, "GET")}
}

// TestOverlap: a request gets the exact overlap of each pause with its
// interval (a pause that began before it, one inside, one that it outlives
// the restart of), other suspensions apart, lock waits of its thread from
// its start; each GC counts the requests it froze once; a request that
// stops while the runtime restarts completes when the stop is handed on;
// a stop without a start and a request still open are counted.
func TestOverlap(t *testing.T) {
	var got []Request
	a := New(&nettrace.Header{QPCFrequency: 1e9}, Options{OnRequest: func(r *Request) { got = append(got, *r) }})
	a.Event(kestrel(kStart, 1000, 7, "c:1", "/orders/42"))
	a.Event(kestrel(kStart, 1500, 8, "c:2", "/orders/43"))
	a.Stopped(&analysis.Stopped{GC: 5, BeginNanos: 500, EndNanos: 1200})      // 200 in r1, 0 in r2
	a.Stopped(&analysis.Stopped{GC: 6, BeginNanos: 2000, EndNanos: 2100})     // 100 in both
	a.Stopped(&analysis.Stopped{GC: 6, BeginNanos: 2500, EndNanos: 2600})     // a second stop of GC 6: 100 more in both
	a.Stopped(&analysis.Stopped{Reason: 2, BeginNanos: 2700, EndNanos: 2750}) // not a GC's: 50 suspended
	a.Wait(&analysis.Wait{Thread: 7, Kind: analysis.WaitLock, BeginNanos: 900, EndNanos: 1400})
	a.Wait(&analysis.Wait{Thread: 9, Kind: analysis.WaitLock, BeginNanos: 900, EndNanos: 1400}) // no request on thread 9
	a.Event(kestrel(kStop, 3000, 7, "c:1", "/orders/42"))
	// r2 stops while the runtime restarts from GC 7's stop (3500..4000).
	a.Event(&nettrace.Event{Meta: susp, Timestamp: 3500, ThreadID: 1})
	a.Event(kestrel(kStop, 3900, 8, "c:2", "/orders/43"))
	if len(got) != 1 {
		t.Fatalf("%d requests complete before the restart ended", len(got))
	}
	a.Stopped(&analysis.Stopped{GC: 7, BeginNanos: 3500, EndNanos: 4000})
	a.Event(&nettrace.Event{Meta: rest, Timestamp: 4000, ThreadID: 1})
	a.Event(kestrel(kStop, 4100, 8, "c:9", "/x"))
	a.Event(kestrel(kStart, 4200, 8, "c:3", "/open"))
	a.Finish()
	if len(got) != 2 {
		t.Fatalf("%d requests", len(got))
	}
	r1, r2 := got[0], got[1]
	if r1.ID != "c:1" || r1.Route != "/orders/{n}" || r1.DurationNanos() != 2000 || r1.GCPausedNanos != 400 ||
		r1.SuspendedNanos != 50 || r1.LockWaitNanos != 400 || len(r1.GCs) != 2 || r1.GCs[0] != 5 || r1.GCs[1] != 6 {
		t.Errorf("r1 %+v", r1)
	}
	want := []Segment{{SegLockWait, 0, 1000, 1400}, {SegGCPaused, 5, 1000, 1200}, {SegGCPaused, 6, 2000, 2100}, {SegGCPaused, 6, 2500, 2600}, {SegSuspended, 0, 2700, 2750}}
	if !slices.Equal(r1.Segments, want) || r1.SegmentsDropped != 0 {
		t.Errorf("r1's segments %+v, want %+v", r1.Segments, want)
	}
	if r2.ID != "c:2" || r2.GCPausedNanos != 200+400 || r2.LockWaitNanos != 0 || len(r2.GCs) != 2 || r2.GCs[1] != 7 {
		t.Errorf("r2 %+v", r2)
	}
	res := a.Result()
	if res.Requests != 2 || res.HitByGC != 2 || res.StopsWithoutStart != 1 || res.OpenAtEnd != 1 || len(res.Open) != 1 || res.Open[0].Path != "/open" {
		t.Errorf("result %+v", res)
	}
	if len(res.GCs) != 3 || res.GCs[1].GC != 6 || res.GCs[1].InFlight != 2 || res.GCs[1].PauseNanos != 200 || res.GCs[1].RequestNanosLost != 400 ||
		res.GCs[0].InFlight != 1 || res.GCs[0].RequestNanosLost != 200 || res.GCs[2].SlowestNanos != 2400 {
		t.Errorf("GCs %+v", res.GCs)
	}
	if len(res.Routes) != 1 || res.Routes[0].Count != 2 || res.Routes[0].HitByPause != 2 || res.Routes[0].Max != 2400 {
		t.Errorf("routes %+v", res.Routes)
	}
	// A payload that does not decode is counted, never a panic.
	a.Event(&nettrace.Event{Meta: kStart, Timestamp: 5000, Payload: []byte{1}})
	if st := a.Stats(); st.DecodeErrors != 1 {
		t.Errorf("stats %+v", st)
	}
}

var (
	hStart = &nettrace.Metadata{Provider: clrevents.ProviderHosting, EventName: "RequestStart", EventID: 3, HasFields: true,
		Fields: []nettrace.Field{{Name: "method", Type: nettrace.FieldType{Code: nettrace.TypeString}}, {Name: "path", Type: nettrace.FieldType{Code: nettrace.TypeString}}}}
	hStop   = &nettrace.Metadata{Provider: clrevents.ProviderHosting, EventName: "RequestStop", EventID: 4, HasFields: true}
	outStop = &nettrace.Metadata{Provider: clrevents.ProviderHTTP, EventName: "RequestStop", EventID: 2, HasFields: true,
		Fields: []nettrace.Field{{Name: "statusCode", Type: nettrace.FieldType{Code: nettrace.TypeInt32}}}}
	outStart = &nettrace.Metadata{Provider: clrevents.ProviderHTTP, EventName: "RequestStart", EventID: 1, HasFields: true,
		Fields: []nettrace.Field{{Name: "scheme", Type: nettrace.FieldType{Code: nettrace.TypeString}}, {Name: "host", Type: nettrace.FieldType{Code: nettrace.TypeString}},
			{Name: "port", Type: nettrace.FieldType{Code: nettrace.TypeInt32}}, {Name: "pathAndQuery", Type: nettrace.FieldType{Code: nettrace.TypeString}}}}
)

func guid(b byte) nettrace.GUID { return nettrace.GUID{b, 1} }

// TestHostingAndCalls: without Kestrel's events Hosting's pair by activity
// id; an outgoing call whose parent activity is the request's is timed
// from its start to its stop on another thread; a call still in flight
// when its request ends is dropped and counted.
func TestHostingAndCalls(t *testing.T) {
	var got []Request
	a := New(&nettrace.Header{QPCFrequency: 1e9}, Options{OnRequest: func(r *Request) { got = append(got, *r) }})
	call := append(utf16z("http", "127.0.0.1"), 80, 0, 0, 0)
	call = append(call, utf16z("/b")...)
	a.Event(&nettrace.Event{Meta: hStart, Timestamp: 100, ThreadID: 1, ActivityID: guid(1), Payload: utf16z("GET", "/a/1")})
	a.Event(&nettrace.Event{Meta: outStart, Timestamp: 200, ThreadID: 1, ActivityID: guid(2), RelatedActivityID: guid(1), Payload: call})
	a.Event(&nettrace.Event{Meta: outStart, Timestamp: 250, ThreadID: 1, ActivityID: guid(3), RelatedActivityID: guid(1), Payload: call})
	a.Event(&nettrace.Event{Meta: outStop, Timestamp: 700, ThreadID: 2, ActivityID: guid(2), Payload: []byte{200, 0, 0, 0}})
	a.Event(&nettrace.Event{Meta: hStop, Timestamp: 900, ThreadID: 2, ActivityID: guid(1)})
	a.Event(&nettrace.Event{Meta: outStop, Timestamp: 950, ThreadID: 2, ActivityID: guid(3), Payload: []byte{200, 0, 0, 0}})
	a.Finish()
	if len(got) != 1 {
		t.Fatalf("%d requests", len(got))
	}
	r := got[0]
	if r.ID != "" || r.Method != "GET" || r.Route != "/a/{n}" || r.DurationNanos() != 800 || r.HTTPOutCount != 2 || r.HTTPOutNanos != 500 {
		t.Errorf("request %+v", r)
	}
	res := a.Result()
	if res.Source != "hosting" || !res.ActivityFlow || res.HTTPUnpaired != 1 || len(a.out) != 0 || len(a.byAct) != 0 || len(a.onThread) != 0 {
		t.Errorf("result %+v; tables %d %d %d", res, len(a.out), len(a.byAct), len(a.onThread))
	}
}

// DiagnosticSource's forwarded event, as ASP.NET Core 10 declares it.
var dsStop = &nettrace.Metadata{Provider: clrevents.ProviderDiagSource, EventName: "Activity1Stop", EventID: 2, HasFields: true,
	Fields: []nettrace.Field{{Name: "SourceName", Type: nettrace.FieldType{Code: nettrace.TypeString}},
		{Name: "EventName", Type: nettrace.FieldType{Code: nettrace.TypeString}},
		{Name: "Arguments", Type: nettrace.FieldType{Code: nettrace.TypeArray, Elem: &nettrace.FieldType{Code: nettrace.TypeObject,
			Fields: []nettrace.Field{{Name: "Key", Type: nettrace.FieldType{Code: nettrace.TypeString}}, {Name: "Value", Type: nettrace.FieldType{Code: nettrace.TypeString}}}}}}}}

func diagStop(ts int64, source, event string, kv ...string) *nettrace.Event {
	b := utf16z(source, event)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(kv)/2))
	b = append(b, utf16z(kv...)...)
	return &nettrace.Event{Meta: dsStop, Timestamp: ts, ThreadID: 1, Payload: b}
}

// TestStatus: Hosting's HttpRequestIn.Stop comes after Kestrel's stop and
// gives the status of the slowest requests by their request id; a request
// it never came for has none; an event of another session's specs is
// counted and said.
func TestStatus(t *testing.T) {
	a := New(&nettrace.Header{QPCFrequency: 1e9}, Options{Slowest: 2})
	a.Event(kestrel(kStart, 100, 1, "c:1", "/a"))
	a.Event(kestrel(kStop, 900, 1, "c:1", "/a"))
	a.Event(diagStop(950, clrevents.DiagSourceAspNetCore, clrevents.DiagSourceRequestStop, "TraceIdentifier", "c:1", "StatusCode", "404"))
	a.Event(kestrel(kStart, 1000, 1, "c:2", "/b"))
	a.Event(kestrel(kStop, 1500, 1, "c:2", "/b")) // no stop of Hosting's
	a.Event(kestrel(kStart, 2000, 1, "c:3", "/c"))
	a.Event(kestrel(kStop, 2100, 1, "c:3", "/c")) // not among the 2 slowest
	a.Event(diagStop(2150, clrevents.DiagSourceAspNetCore, clrevents.DiagSourceRequestStop, "TraceIdentifier", "c:3", "StatusCode", "200"))
	a.Finish()
	res := a.Result()
	if len(res.Slowest) != 2 || res.Slowest[0].ID != "c:1" || res.Slowest[0].Status != 404 || res.Slowest[1].ID != "c:2" || res.Slowest[1].Status != 0 {
		t.Fatalf("slowest %+v", res.Slowest)
	}
	if res.StatusStops != 2 || res.StatusForeign != 0 || len(res.Notes) != 2 ||
		res.Notes[1] != "status unknown for 1 of the slowest requests: their HttpRequestIn.Stop did not come (the stream ended first, or DiagnosticSource's specs changed)" {
		t.Errorf("stops %d, foreign %d, notes %q", res.StatusStops, res.StatusForeign, res.Notes)
	}
	// Another session's specs: its events are not clrspy's.
	a.Event(diagStop(3000, "HttpHandlerDiagnosticListener", "System.Net.Http.HttpRequestOut.Stop", "ActivityId", "x"))
	if res := a.Result(); res.StatusForeign != 1 || len(res.Notes) != 2 ||
		res.Notes[1] != "status unknown where missing: Microsoft-Diagnostics-DiagnosticSource forwarded 1 events of another session's FilterAndPayloadSpecs (they are process-wide, the last session's win: another session holds it)" {
		t.Errorf("foreign %d, notes %q", res.StatusForeign, res.Notes)
	}
	// No status events at all.
	b := New(&nettrace.Header{QPCFrequency: 1e9}, Options{})
	b.Event(kestrel(kStart, 100, 1, "c:1", "/a"))
	b.Event(kestrel(kStop, 900, 1, "c:1", "/a"))
	if res := b.Result(); len(res.Notes) != 2 || res.Notes[1][:15] != "status unknown:" {
		t.Errorf("notes %q", res.Notes)
	}
}

// TestFrozen: as a GC ends, the requests its pause froze are the ones it
// hit that completed and the ones still open that started before it ended.
func TestFrozen(t *testing.T) {
	a := New(&nettrace.Header{QPCFrequency: 1e9}, Options{})
	if a.Seen() {
		t.Error("seen before any request event")
	}
	a.Event(kestrel(kStart, 100, 1, "c:1", "/a"))
	a.Event(kestrel(kStart, 200, 2, "c:2", "/a"))
	a.Event(kestrel(kStart, 300, 3, "c:3", "/a"))
	a.Event(kestrel(kStop, 350, 3, "c:3", "/a")) // before the pause
	a.Stopped(&analysis.Stopped{GC: 4, BeginNanos: 400, EndNanos: 500})
	a.Event(kestrel(kStop, 600, 1, "c:1", "/a"))  // hit, completed
	a.Event(kestrel(kStart, 700, 3, "c:4", "/a")) // after the pause
	if n := a.Frozen(4, 0); n != 2 || !a.Seen() {
		t.Errorf("GC 4 froze %d, want 2 (c:1 completed, c:2 open)", n)
	}
	// A pause not handed on yet: its end from the caller.
	if n := a.Frozen(5, 800); n != 2 {
		t.Errorf("GC 5 froze %d, want 2 (c:2 and c:4 open)", n)
	}
}

// TestStatusTakenOver: DiagnosticSource writes Version at each session's
// command, then a Message per spec it enables: clrspy's three do not
// count; a later set that is not them (here one of clrspy's names alone,
// as another tool's specs were seen to give) says another session
// replaced clrspy's specs.
func TestStatusTakenOver(t *testing.T) {
	msg := &nettrace.Metadata{Provider: clrevents.ProviderDiagSource, EventName: "Message", EventID: 1, HasFields: true,
		Fields: []nettrace.Field{{Name: "Message", Type: nettrace.FieldType{Code: nettrace.TypeString}}}}
	version := &nettrace.Metadata{Provider: clrevents.ProviderDiagSource, EventName: "Version", EventID: 14, HasFields: true}
	a := New(&nettrace.Header{QPCFrequency: 1e9}, Options{})
	a.Event(&nettrace.Event{Meta: version, Timestamp: 9})
	for _, s := range []string{"HttpRequestIn.Stop", "HttpRequestIn.Start", "HttpRequestIn"} {
		a.Event(&nettrace.Event{Meta: msg, Timestamp: 10, Payload: utf16z("DiagnosticSource: Enabling 'Microsoft.AspNetCore/Microsoft.AspNetCore.Hosting." + s + "'")})
	}
	a.Event(&nettrace.Event{Meta: msg, Timestamp: 11, Payload: utf16z("DiagnosticSource: suppressing implicit transforms.")})
	a.Event(kestrel(kStart, 100, 1, "c:1", "/a"))
	a.Event(kestrel(kStop, 900, 1, "c:1", "/a"))
	if res := a.Result(); res.StatusTakenOver != 0 {
		t.Errorf("clrspy's own spec counted: %d", res.StatusTakenOver)
	}
	// Another session's command: one of clrspy's names, not all of them.
	a.Event(&nettrace.Event{Meta: version, Timestamp: 1000})
	a.Event(&nettrace.Event{Meta: msg, Timestamp: 1001, Payload: utf16z("DiagnosticSource: Enabling 'Microsoft.AspNetCore/Microsoft.AspNetCore.Hosting.HttpRequestIn.Start'")})
	res := a.Result()
	if res.StatusTakenOver != 1 || len(res.Notes) != 2 || !strings.HasPrefix(res.Notes[1], "status unknown from then on: another session enabled Microsoft-Diagnostics-DiagnosticSource with specs of its own (1 times)") {
		t.Errorf("taken over %d, notes %q", res.StatusTakenOver, res.Notes)
	}
}
