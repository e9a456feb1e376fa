package clrevents

import (
	"compress/gzip"
	"io"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/nettrace"
)

// TestWebEvents decodes the request events of requests.nettrace.gz (an
// ASP.NET Core 10 recording) by name: Kestrel's starts and stops pair by
// request id with the same path and method, every outgoing call goes to
// the server's own /backend/ on 127.0.0.1 and ends with status 200, and
// the counts match the workload's own (406 requests, 102 of them calls).
func TestWebEvents(t *testing.T) {
	r := tracetest.Open(t, "requests.nettrace.gz", func(f io.Reader) (*nettrace.Reader, error) {
		z, err := gzip.NewReader(f)
		if err != nil {
			return nil, err
		}
		return nettrace.NewReader(z)
	})
	open := map[string]KestrelRequest{}
	n := map[WebEvent]int{}
	err := tracetest.ReadAll(t, r, func(ev *nettrace.Event) {
		k := WebKind(ev.Meta)
		if k == WebNone {
			return
		}
		n[k]++
		var err error
		switch k {
		case KestrelRequestStart, KestrelRequestStop:
			var e KestrelRequest
			e, err = DecodeKestrelRequest(ev.Meta, ev.Payload, 8)
			if e.Method != "GET" || e.HTTPVersion != "HTTP/1.1" || !strings.HasPrefix(e.RequestID, e.ConnectionID+":") {
				t.Errorf("%v: %+v", k, e)
			}
			if k == KestrelRequestStart {
				open[e.RequestID] = e
			} else if s, ok := open[e.RequestID]; !ok || s != e {
				t.Errorf("stop %+v, start %+v", e, s)
			} else {
				delete(open, e.RequestID)
			}
		case KestrelConnectionStart:
			var e KestrelConnection
			e, err = DecodeKestrelConnection(ev.Meta, ev.Payload, 8)
			if !strings.HasPrefix(e.LocalEndPoint, "127.0.0.1:") || e.RemoteEndPoint == "" {
				t.Errorf("connection %+v", e)
			}
		case HostingRequestStart:
			var e HostingRequest
			e, err = DecodeHostingRequest(ev.Meta, ev.Payload, 8)
			if e.Method != "GET" || e.Path == "" {
				t.Errorf("hosting %+v", e)
			}
		case HTTPRequestStart:
			var e HTTPRequest
			e, err = DecodeHTTPRequest(ev.Meta, ev.Payload, 8)
			if e.Scheme != "http" || e.Host != "127.0.0.1" || e.Port == 0 || !strings.HasPrefix(e.PathAndQuery, "/backend/") || e.VersionMajor != 1 {
				t.Errorf("outgoing %+v", e)
			}
		case HTTPRequestStop:
			var e HTTPRequestEnd
			e, err = DecodeHTTPRequestEnd(ev.Meta, ev.Payload, 8)
			if e.StatusCode != 200 {
				t.Errorf("outgoing stop %+v", e)
			}
		case HTTPRequestLeftQueue:
			var e HTTPLeftQueue
			e, err = DecodeHTTPLeftQueue(ev.Meta, ev.Payload, 8)
			if e.TimeOnQueueMs < 0 || e.VersionMajor != 1 {
				t.Errorf("left queue %+v", e)
			}
		}
		if err != nil {
			t.Errorf("%v: %v", k, err)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if n[KestrelRequestStart] != 406 || n[KestrelRequestStop] != 406 || n[HTTPRequestStart] != 102 || n[HTTPRequestStop] != 102 || len(open) != 0 {
		t.Errorf("counts %v, %d left open", n, len(open))
	}
	if _, err := DecodeKestrelRequest(&nettrace.Metadata{Provider: ProviderKestrel, EventName: "RequestStart"}, nil, 8); err == nil {
		t.Error("metadata without fields decoded")
	}
}
