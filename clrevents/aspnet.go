package clrevents

import (
	"fmt"
	"strings"

	"github.com/clrspy/clrspy/nettrace"
)

// The request events of ASP.NET Core and HttpClient. They are EventSource
// events: their metadata names them and lists their fields, so they are
// recognised by provider and event name (ids moved between versions: id 11
// of Kestrel is Configuration in .NET 10, it was RequestQueued once) and
// their fields are read by name, whatever their order or the fields a
// version adds.

// Providers of the request events.
const (
	ProviderKestrel = "Microsoft-AspNetCore-Server-Kestrel"
	ProviderHosting = "Microsoft.AspNetCore.Hosting"
	ProviderHTTP    = "System.Net.Http"
	// ProviderTPL is the task library's provider: its keyword
	// KeywordTasksFlowActivityIds makes every event's activity id follow
	// the async flow, so events on any thread name the request they serve.
	ProviderTPL = "System.Threading.Tasks.TplEventSource"
	// ProviderDiagSource forwards DiagnosticListener events (here Hosting's
	// Microsoft.AspNetCore.Hosting.HttpRequestIn.Stop, whose HttpContext
	// gives the response's status) as chosen by its FilterAndPayloadSpecs
	// argument. The specs are process-wide: the last session to enable
	// the provider sets them for every session.
	ProviderDiagSource = "Microsoft-Diagnostics-DiagnosticSource"
)

// DiagSourceRequestSpecs is the FilterAndPayloadSpecs that forwards each
// incoming request's stop with its request id (HttpContext.TraceIdentifier,
// Kestrel's requestId) and its response status, as an Activity1Stop event.
// Hosting writes the stop only when its activity name and start are
// enabled too (measured, ASP.NET Core 10): the start comes as an Event
// with no arguments (not Activity1Start, which would nest an activity in
// the task library's flow).
const DiagSourceRequestSpecs = "Microsoft.AspNetCore/Microsoft.AspNetCore.Hosting.HttpRequestIn:-\n" +
	"Microsoft.AspNetCore/Microsoft.AspNetCore.Hosting.HttpRequestIn.Start:-\n" +
	"Microsoft.AspNetCore/" + DiagSourceRequestStop + "@Activity1Stop:-TraceIdentifier;Response.StatusCode"

// DiagSourceArgs is the session argument of ProviderDiagSource carrying
// DiagSourceRequestSpecs (quoted: the specs hold ';').
const DiagSourceArgs = `FilterAndPayloadSpecs="` + DiagSourceRequestSpecs + `"`

// KeywordsDiagSource are ProviderDiagSource's Messages (its own errors)
// and Events (the forwarded events) keywords.
const KeywordsDiagSource = 0x3

// DiagSource names of the forwarded request stop.
const (
	DiagSourceAspNetCore   = "Microsoft.AspNetCore"
	DiagSourceRequestStart = "Microsoft.AspNetCore.Hosting.HttpRequestIn.Start"
	DiagSourceRequestStop  = "Microsoft.AspNetCore.Hosting.HttpRequestIn.Stop"
)

// KeywordTasksFlowActivityIds is TplEventSource's TasksFlowActivityIds.
const KeywordTasksFlowActivityIds = 0x80

// WebEvent says which request event a metadata record describes.
type WebEvent uint8

// Request events.
const (
	WebNone WebEvent = iota
	KestrelConnectionStart
	KestrelConnectionStop
	KestrelRequestStart
	KestrelRequestStop
	HostingRequestStart
	HostingRequestStop
	HTTPRequestStart
	HTTPRequestStop
	HTTPRequestFailed
	HTTPRequestLeftQueue
	// DiagSourceEvent is any event DiagnosticSource forwards (Event,
	// ActivityNStart/Stop, ...): DecodeDiagSource reads it.
	DiagSourceEvent
	// DiagSourceMessage is DiagnosticSource's own Message (keyword 0x1):
	// it says which specs it enables ("DiagnosticSource: Enabling
	// 'Source/Event'"), whichever session gave them.
	DiagSourceMessage
	// DiagSourceVersion is written each time a session's command
	// (re)enables DiagnosticSource: the Messages that follow name the
	// specs in force from then on.
	DiagSourceVersion
)

var webNames = [...]string{"", "Kestrel/ConnectionStart", "Kestrel/ConnectionStop", "Kestrel/RequestStart",
	"Kestrel/RequestStop", "Hosting/RequestStart", "Hosting/RequestStop", "Http/RequestStart",
	"Http/RequestStop", "Http/RequestFailed", "Http/RequestLeftQueue", "DiagnosticSource/Event", "DiagnosticSource/Message", "DiagnosticSource/Version"}

func (w WebEvent) String() string {
	if int(w) < len(webNames) {
		return webNames[w]
	}
	return fmt.Sprintf("WebEvent(%d)", uint8(w))
}

// WebKind classifies m by its provider and event name (WebNone: not a
// request event).
func WebKind(m *nettrace.Metadata) WebEvent {
	if m.Runtime != nettrace.NotRuntime {
		return WebNone
	}
	switch m.Provider {
	case ProviderKestrel:
		switch m.EventName {
		case "ConnectionStart":
			return KestrelConnectionStart
		case "ConnectionStop":
			return KestrelConnectionStop
		case "RequestStart":
			return KestrelRequestStart
		case "RequestStop":
			return KestrelRequestStop
		}
	case ProviderHosting:
		switch m.EventName {
		case "RequestStart":
			return HostingRequestStart
		case "RequestStop":
			return HostingRequestStop
		}
	case ProviderDiagSource:
		switch m.EventName {
		case "Event", "Activity1Start", "Activity1Stop", "Activity2Start", "Activity2Stop", "RecursiveActivity1Start",
			"RecursiveActivity1Stop", "NewDiagnosticListener":
			return DiagSourceEvent
		case "Message":
			return DiagSourceMessage
		case "Version":
			return DiagSourceVersion
		}
	case ProviderHTTP:
		switch m.EventName {
		case "RequestStart":
			return HTTPRequestStart
		case "RequestStop":
			return HTTPRequestStop
		case "RequestFailed":
			return HTTPRequestFailed
		case "RequestLeftQueue":
			return HTTPRequestLeftQueue
		}
	}
	return WebNone
}

// KestrelConnection is Kestrel's ConnectionStart/ConnectionStop (the stop
// carries the id alone).
type KestrelConnection struct {
	ConnectionID   string
	LocalEndPoint  string
	RemoteEndPoint string
}

// KestrelRequest is Kestrel's RequestStart/RequestStop (.NET 5+): both
// carry the connection and request ids (RequestID is the request's
// HttpContext.TraceIdentifier, "connection:sequence"), so a request pairs
// without activity ids.
type KestrelRequest struct {
	ConnectionID string
	RequestID    string
	HTTPVersion  string
	Path         string
	Method       string
}

// HostingRequest is Hosting's RequestStart (its RequestStop has no
// payload: the two pair through the activity id).
type HostingRequest struct {
	Method string
	Path   string
}

// HTTPRequest is System.Net.Http's RequestStart, an outgoing call.
type HTTPRequest struct {
	Scheme       string
	Host         string
	Port         int64
	PathAndQuery string
	VersionMajor int64
	VersionMinor int64
}

// HTTPRequestEnd is System.Net.Http's RequestStop (StatusCode -1: the
// version writes none, or no response arrived) or RequestFailed
// (Message: the exception's message where the version writes it).
type HTTPRequestEnd struct {
	StatusCode int64
	Message    string
}

// HTTPLeftQueue is System.Net.Http's RequestLeftQueue: how long a request
// waited for a connection.
type HTTPLeftQueue struct {
	TimeOnQueueMs float64
	VersionMajor  int64
	VersionMinor  int64
}

// webFields decodes the payload by its metadata's field list.
func webFields(m *nettrace.Metadata, payload []byte, ptrSize int) ([]nettrace.Value, error) {
	if !m.HasFields {
		return nil, fmt.Errorf("%s/%s: %w", m.Provider, m.EventName, nettrace.ErrNoFields)
	}
	return nettrace.DecodePayload(m, payload, ptrSize)
}

func str(vs []nettrace.Value, name string) string {
	for i := range vs {
		if vs[i].Name == name {
			if s, ok := vs[i].V.(string); ok {
				return s
			}
		}
	}
	return ""
}

// num reads an integer field of any width (def when absent).
func num(vs []nettrace.Value, name string, def int64) int64 {
	for i := range vs {
		if vs[i].Name != name {
			continue
		}
		switch v := vs[i].V.(type) {
		case int8:
			return int64(v)
		case uint8:
			return int64(v)
		case int16:
			return int64(v)
		case uint16:
			return int64(v)
		case int32:
			return int64(v)
		case uint32:
			return int64(v)
		case int64:
			return v
		case uint64:
			return int64(v)
		}
	}
	return def
}

func float(vs []nettrace.Value, name string) float64 {
	for i := range vs {
		if vs[i].Name == name {
			switch v := vs[i].V.(type) {
			case float64:
				return v
			case float32:
				return float64(v)
			}
		}
	}
	return 0
}

// DecodeKestrelConnection decodes Kestrel's ConnectionStart or
// ConnectionStop.
func DecodeKestrelConnection(m *nettrace.Metadata, payload []byte, ptrSize int) (KestrelConnection, error) {
	vs, err := webFields(m, payload, ptrSize)
	if err != nil {
		return KestrelConnection{}, err
	}
	c := KestrelConnection{ConnectionID: str(vs, "connectionId"), LocalEndPoint: str(vs, "localEndPoint"),
		RemoteEndPoint: str(vs, "remoteEndPoint")}
	if c.ConnectionID == "" {
		return c, fmt.Errorf("%s/%s: no connectionId", m.Provider, m.EventName)
	}
	return c, nil
}

// DecodeKestrelRequest decodes Kestrel's RequestStart or RequestStop.
func DecodeKestrelRequest(m *nettrace.Metadata, payload []byte, ptrSize int) (KestrelRequest, error) {
	vs, err := webFields(m, payload, ptrSize)
	if err != nil {
		return KestrelRequest{}, err
	}
	r := KestrelRequest{ConnectionID: str(vs, "connectionId"), RequestID: str(vs, "requestId"),
		HTTPVersion: str(vs, "httpVersion"), Path: str(vs, "path"), Method: str(vs, "method")}
	if r.RequestID == "" {
		return r, fmt.Errorf("%s/%s: no requestId", m.Provider, m.EventName)
	}
	return r, nil
}

// DecodeHostingRequest decodes Hosting's RequestStart.
func DecodeHostingRequest(m *nettrace.Metadata, payload []byte, ptrSize int) (HostingRequest, error) {
	vs, err := webFields(m, payload, ptrSize)
	if err != nil {
		return HostingRequest{}, err
	}
	return HostingRequest{Method: str(vs, "method"), Path: str(vs, "path")}, nil
}

// DecodeHTTPRequest decodes System.Net.Http's RequestStart.
func DecodeHTTPRequest(m *nettrace.Metadata, payload []byte, ptrSize int) (HTTPRequest, error) {
	vs, err := webFields(m, payload, ptrSize)
	if err != nil {
		return HTTPRequest{}, err
	}
	return HTTPRequest{Scheme: str(vs, "scheme"), Host: str(vs, "host"), Port: num(vs, "port", 0),
		PathAndQuery: str(vs, "pathAndQuery"), VersionMajor: num(vs, "versionMajor", 0),
		VersionMinor: num(vs, "versionMinor", 0)}, nil
}

// DecodeHTTPRequestEnd decodes System.Net.Http's RequestStop or
// RequestFailed (both may be empty in older versions).
func DecodeHTTPRequestEnd(m *nettrace.Metadata, payload []byte, ptrSize int) (HTTPRequestEnd, error) {
	vs, err := webFields(m, payload, ptrSize)
	if err != nil {
		return HTTPRequestEnd{StatusCode: -1}, err
	}
	return HTTPRequestEnd{StatusCode: num(vs, "statusCode", -1), Message: str(vs, "exceptionMessage")}, nil
}

// DecodeHTTPLeftQueue decodes System.Net.Http's RequestLeftQueue.
func DecodeHTTPLeftQueue(m *nettrace.Metadata, payload []byte, ptrSize int) (HTTPLeftQueue, error) {
	vs, err := webFields(m, payload, ptrSize)
	if err != nil {
		return HTTPLeftQueue{}, err
	}
	return HTTPLeftQueue{TimeOnQueueMs: float(vs, "timeOnQueueMilliseconds"),
		VersionMajor: num(vs, "versionMajor", 0), VersionMinor: num(vs, "versionMinor", 0)}, nil
}

// DiagSource is one event DiagnosticSource forwarded: the listener's and
// event's names and the arguments its specs asked for (key, value pairs).
type DiagSource struct {
	Kind       string // the EventSource event: Activity1Stop, Event, ...
	SourceName string
	EventName  string
	Args       [][2]string
}

// Arg is the value of key ("" when absent).
func (d *DiagSource) Arg(key string) string {
	for _, kv := range d.Args {
		if kv[0] == key {
			return kv[1]
		}
	}
	return ""
}

// DecodeDiagSource decodes a DiagnosticSource forwarded event:
// SourceName, EventName and Arguments (an array of {Key, Value}).
func DecodeDiagSource(m *nettrace.Metadata, payload []byte, ptrSize int) (DiagSource, error) {
	vs, err := webFields(m, payload, ptrSize)
	if err != nil {
		return DiagSource{}, err
	}
	d := DiagSource{Kind: m.EventName, SourceName: str(vs, "SourceName"), EventName: str(vs, "EventName")}
	for i := range vs {
		if vs[i].Name != "Arguments" {
			continue
		}
		arr, _ := vs[i].V.([]any)
		for _, e := range arr {
			kv, _ := e.([]nettrace.Value)
			d.Args = append(d.Args, [2]string{str(kv, "Key"), str(kv, "Value")})
		}
	}
	return d, nil
}

// DecodeDiagSourceMessage decodes DiagnosticSource's Message: its text.
func DecodeDiagSourceMessage(m *nettrace.Metadata, payload []byte, ptrSize int) (string, error) {
	vs, err := webFields(m, payload, ptrSize)
	if err != nil {
		return "", err
	}
	return str(vs, "Message"), nil
}

// DiagSourceEnabling is the spec ("Source/Event") a DiagnosticSource
// Message says it enables ("" for another message).
func DiagSourceEnabling(msg string) string {
	const pre = "DiagnosticSource: Enabling '"
	if !strings.HasPrefix(msg, pre) || !strings.HasSuffix(msg, "'") {
		return ""
	}
	return msg[len(pre) : len(msg)-1]
}

// DiagSourceRequestSpec is which of DiagSourceRequestSpecs' specs spec
// ("Source/Event") is, as a bit (1, 2, 4; 0: not one of them).
func DiagSourceRequestSpec(spec string) uint8 {
	switch spec {
	case DiagSourceAspNetCore + "/Microsoft.AspNetCore.Hosting.HttpRequestIn":
		return 1
	case DiagSourceAspNetCore + "/" + DiagSourceRequestStart:
		return 2
	case DiagSourceAspNetCore + "/" + DiagSourceRequestStop:
		return 4
	}
	return 0
}

// DiagSourceRequestSpecsAll are DiagSourceRequestSpec's bits together.
const DiagSourceRequestSpecsAll = 7
