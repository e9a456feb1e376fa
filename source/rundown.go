package source

import (
	"errors"
	"fmt"
	"io"

	"github.com/clrspy/clrspy/ipc"
	"github.com/clrspy/clrspy/nettrace"
)

// Rundown names the code a live target compiled before the stream's
// session began: it opens a second session on the same runtime, stops it
// at once, and hands fn every event of the rundown the runtime writes at
// that stop (method and module names, the Microsoft-Windows-
// DotNETRuntimeRundown provider), then returns. The stream's own rundown
// comes only when its session ends, too late for a live view that names
// stack samples as they arrive (clrspy top --cpu, the live page's flame
// graph). A launched program has compiled nothing before its session, and
// a file has its rundown in it: for both, Rundown does nothing.
//
// providers are the rundown session's: the runtime provider entry of the
// method and module events (stacks.SymbolProviders, derived from the spec
// table; source, below the analyses, does not name their events itself).
// The session needs one provider to exist; the rundown it stops with is
// the runtime's default (ipc.DefaultRundownKeyword), whatever providers
// say.
//
// fn runs on the calling goroutine while the stream's reader may be
// running on another: the caller synchronises (monitor.SymbolEvent does).
func (s *Stream) Rundown(providers []ipc.Provider, fn func(*nettrace.Event)) error {
	if s.Kind != Attach && s.Kind != Listen {
		return nil
	}
	if len(providers) == 0 {
		return errors.New("rundown session: no providers")
	}
	c := s.client
	if c == nil {
		var err error
		if c, err = ipc.Dial(s.Pid); err != nil {
			return fmt.Errorf("rundown session: %w", err)
		}
	}
	// A small buffer suffices: the session lives for one stop.
	sess, err := c.StartSession(ipc.SessionConfig{BufferMB: 64, Providers: providers})
	if err != nil {
		return fmt.Errorf("rundown session: %w", err)
	}
	defer sess.Close()
	r, err := nettrace.NewReader(sess)
	if err != nil {
		return fmt.Errorf("rundown session: %w", err)
	}
	// The runtime writes the rundown into the stream before it answers
	// the stop: read while it does.
	stopped := make(chan error, 1)
	go func() { stopped <- sess.Stop() }()
	for {
		ev, err := r.Next()
		if err != nil {
			// A target that exits meanwhile cuts the stream: what
			// arrived is still worth having.
			var te *nettrace.TruncatedError
			if errors.Is(err, io.EOF) || errors.As(err, &te) {
				err = nil
			}
			if serr := <-stopped; err == nil && serr != nil {
				err = serr
			}
			if err != nil {
				return fmt.Errorf("rundown session: %w", err)
			}
			return nil
		}
		fn(ev)
	}
}
