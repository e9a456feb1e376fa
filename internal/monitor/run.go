package monitor

import (
	"context"
	"errors"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/source"
)

// Run reads s to its end into the monitor (and into also, analyses that
// ride along on the same stream: serve's pause-triggered capture), on the
// calling goroutine, and records how it ended (Session.State). For a live stream it first asks
// the target for its ProcessInfo and start time. Cancelling ctx stops the
// session (Stream.Stop): the runtime's rundown still arrives and is read,
// so Run returns once the stream has ended cleanly. The caller closes s;
// for a launched program, SetExitCode after Close records its status.
func (m *Monitor) Run(ctx context.Context, s *source.Stream, also ...analysis.Analyzer) (analysis.End, error) {
	m.mu.Lock()
	m.sess.name, m.sess.kind = s.Name, s.Kind.String()
	m.mu.Unlock()
	if s.Live() {
		m.SetProcess(s.Pid, s.ProcName(), s.ProcessStart())
		if info, err := s.ProcessInfo(); err == nil {
			m.SetProcessInfo(info)
		}
	}
	// Cancelling ctx stops the session; the stream then ends.
	defer context.AfterFunc(ctx, s.Stop)()
	end, err := s.Run(append([]analysis.Analyzer{m}, also...)...)
	m.ended(end, err, ctx.Err() != nil)
	return end, err
}

// ended records the stream's end.
func (m *Monitor) ended(end analysis.End, err error, stopped bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sess.endLost = end.EventsLost
	m.sess.truncated = end.Truncated != nil
	switch {
	case err != nil && !errors.Is(err, nettrace.ErrTruncated):
		m.sess.state, m.sess.err = StateError, err.Error()
	case end.TargetExited:
		m.sess.state = StateExited
	case stopped || m.sess.kind == source.Attach.String() || m.sess.kind == source.Launch.String() || m.sess.kind == source.Listen.String():
		m.sess.state = StateStopped
	default:
		m.sess.state = StateEnded
	}
}

// SetExitCode records the target's exit status (a launched program's,
// from Stream.ExitCode once the stream is closed).
func (m *Monitor) SetExitCode(code int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sess.exitCode = &code
	if m.sess.state == StateRunning || m.sess.state == StateStopped {
		m.sess.state = StateExited
	}
}

// SetStopped marks a live session stopped by clrspy (for callers that
// feed Event themselves instead of calling Run).
func (m *Monitor) SetStopped() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sess.state = StateStopped
}
