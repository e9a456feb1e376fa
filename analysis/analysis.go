package analysis

import "github.com/clrspy/clrspy/nettrace"

// Analyzer is fed every event of a stream in order. The event and the
// memory behind it are valid only during the call (the reader reuses
// them): an analysis copies what it keeps.
type Analyzer interface {
	Event(ev *nettrace.Event)
	Stats() Stats
}

// Finisher is implemented by analyses with work to do when a stream ends
// (heap applies the GC still open); sources call Finish after the last
// event, live snapshots do not.
type Finisher interface {
	Finish()
}

// Stats are what an analysis consumed.
type Stats struct {
	// Events counts the events the analysis used (not every event it was
	// shown: a GC analysis ignores stack samples).
	Events uint64
	// DecodeErrors counts events whose payload did not decode; they are
	// skipped, so a result with DecodeErrors > 0 is incomplete.
	DecodeErrors uint64
	// FirstError is the first decode error, for the report.
	FirstError error
}

// Used counts one event the analysis used.
func (s *Stats) Used() { s.Events++ }

// Failed records a decode error (nil is ignored) and reports whether err
// was non-nil, so callers can write `if st.Failed(err) { return }`.
func (s *Stats) Failed(err error) bool {
	if err == nil {
		return false
	}
	if s.DecodeErrors == 0 {
		s.FirstError = err
	}
	s.DecodeErrors++
	return true
}

// Add merges o into s (the first error of s wins).
func (s *Stats) Add(o Stats) {
	s.Events += o.Events
	if o.DecodeErrors > 0 && s.DecodeErrors == 0 {
		s.FirstError = o.FirstError
	}
	s.DecodeErrors += o.DecodeErrors
}

// End is what the end of the stream that fed the analyses says about its
// events: a result built from a stream that lost events or was cut is
// incomplete. Package source fills it (source.Stream.End).
type End struct {
	// Events counts the events read: delivered, or skipped (Skipped of
	// them) because source.Spec.Keep rejected them.
	Events  uint64
	Skipped uint64
	// EventsLost is the reader's total of events the runtime dropped
	// (sequence-number gaps): a result built from a stream with
	// EventsLost > 0 is incomplete.
	EventsLost uint64
	// Truncated is set when the stream was cut before its end marker;
	// every complete event before the cut was delivered.
	Truncated *nettrace.TruncatedError
	// FirstTimestamp and LastTimestamp are the first and last event's
	// timestamps (event clock; both 0 without events).
	FirstTimestamp, LastTimestamp int64
	// TargetExited is set when a live stream ended because its process
	// exited (not because the session was stopped).
	TargetExited bool
}
