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
