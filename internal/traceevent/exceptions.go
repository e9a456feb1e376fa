package traceevent

import "testing"

// ExceptionEvent is one exception event as TraceEvent decoded it. Kind is
// thrown (Exception/Start), catch, finally, filter (their Start events),
// catch_stop, finally_stop, filter_stop or thrown_stop.
type ExceptionEvent struct {
	Kind       string `json:"kind"`
	TID        uint64 `json:"tid"`
	Type       string `json:"type"`
	Message    string `json:"message"`
	EIP        uint64 `json:"eip"`
	HResult    int32  `json:"hresult"` // TraceEvent's int
	Flags      uint16 `json:"flags"`
	EntryEIP   uint64 `json:"entry_eip"`
	MethodID   uint64 `json:"method_id"`
	MethodName string `json:"method_name"`
}

// ExceptionsResult is what the exceptions mode printed: every exception
// event in stream order.
type ExceptionsResult struct {
	Events     []ExceptionEvent `json:"events"`
	EventsLost int64            `json:"events_lost"`
	Error      string           `json:"error"`
}

// Exceptions runs the exceptions mode on the trace at path.
func Exceptions(tb testing.TB, path string) *ExceptionsResult {
	tb.Helper()
	var r ExceptionsResult
	run(tb, "exceptions", path, &r)
	return &r
}
