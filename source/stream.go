package source

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/ipc"
	"github.com/clrspy/clrspy/nettrace"
)

// Stream is an opened source: its events in timestamp order, and the
// session or program behind them.
type Stream struct {
	// Name says what is read: the file name, "stdin", "pid 123 (name)" or
	// the launched command line.
	Name string
	Kind Kind
	// Pid is the live target's process id (0 for files).
	Pid int

	r    *nettrace.Reader
	in   *countingReader
	size int64

	session *ipc.Session
	// client is a listen-mode runtime's client (its reverse connections);
	// hostPid its pid in clrspy's namespace when known (0: not visible).
	client  *ipc.Client
	hostPid int
	prog    *program // launched program; nil otherwise
	stop    func()   // ends a live session early; the rundown still arrives
	release func() error

	interrupts    atomic.Int32
	stopRequested atomic.Bool
	end           analysis.End
	ended         bool
	closeOnce     sync.Once
	closeErr      error
}

// Header is the stream's header.
func (s *Stream) Header() *nettrace.Header { return s.r.Header() }

// Reader is the underlying reader (stats, metadata, format version).
func (s *Stream) Reader() *nettrace.Reader { return s.r }

// Live reports whether the stream is a live session.
func (s *Stream) Live() bool { return s.Kind.Live() }

// Session is the live EventPipe session, nil for files.
func (s *Stream) Session() *ipc.Session { return s.session }

// Progress reports the bytes read so far and the input's size (0 when
// unknown), for a progress display.
func (s *Stream) Progress() (read, size int64) { return s.in.n.Load(), s.size }

// Next returns the next event. At the end it returns io.EOF, or the
// *nettrace.TruncatedError of a cut stream (after every complete event);
// End then describes the stream. The event is valid until the next call.
func (s *Stream) Next() (*nettrace.Event, error) {
	ev, err := s.r.Next()
	if err == nil {
		if s.end.Events == 0 {
			s.end.FirstTimestamp = ev.Timestamp
		}
		s.end.Events++
		s.end.LastTimestamp = ev.Timestamp
		return ev, nil
	}
	s.finish(err)
	return nil, err
}

func (s *Stream) finish(err error) {
	if s.ended {
		return
	}
	s.ended = true
	rs := s.r.Stats()
	s.end.EventsLost = rs.LostEvents
	s.end.Skipped = rs.Skipped
	s.end.Events += rs.Skipped
	var te *nettrace.TruncatedError
	if errors.As(err, &te) {
		s.end.Truncated = te
	}
	// A live stream the runtime ended without being asked to ended with
	// its process (or the runtime's shutdown).
	s.end.TargetExited = s.Live() && !s.stopRequested.Load()
	// The reader's buffers are not needed past the end (its stats and
	// metadata stay): a heap snapshot builds its graph after it.
	s.r.Release()
}

// End describes the stream once Next has returned an error.
func (s *Stream) End() analysis.End { return s.end }

// Run feeds every event to the analyses, in order, until the stream ends,
// then calls Finish on those that are analysis.Finishers.
// A cut stream is not an error: End.Truncated says where it was cut. Any
// other read error is returned (with the End so far).
func (s *Stream) Run(as ...analysis.Analyzer) (analysis.End, error) {
	for {
		ev, err := s.Next()
		if err != nil {
			for _, a := range as {
				if f, ok := a.(analysis.Finisher); ok {
					f.Finish()
				}
			}
			if err == io.EOF || errors.Is(err, nettrace.ErrTruncated) {
				return s.end, nil
			}
			return s.end, fmt.Errorf("%s: %w", s.Name, err)
		}
		for _, a := range as {
			a.Event(ev)
		}
	}
}

// Drain reads what the reader left unread after an error into Spec.Tee,
// so a copy of the stream stays complete.
func (s *Stream) Drain() error {
	_, err := io.Copy(io.Discard, s.in)
	return err
}

// Stop ends a live session early: the runtime writes its rundown, then
// ends the stream, so keep reading to the end. It returns at once (the
// stop goes on in the background). Files ignore it.
func (s *Stream) Stop() {
	if s.stop != nil {
		s.stopRequested.Store(true)
		go s.stop()
	}
}

// Interrupt handles a SIGINT or SIGTERM sent to clrspy. The first stops
// the session (the rundown flushes through the stream) and, for a launched
// program, then passes the signal on; a second drops the session at once
// (and passes the signal on again).
func (s *Stream) Interrupt(sig os.Signal) {
	n := s.interrupts.Add(1)
	if s.session == nil {
		return
	}
	s.stopRequested.Store(true)
	if n == 1 {
		go func() {
			if s.stop != nil {
				s.stop()
			}
			if s.prog != nil {
				s.prog.signal(sig)
			}
		}()
		return
	}
	if s.prog != nil {
		s.prog.signal(sig)
	}
	s.session.Close()
}

// Close releases the stream. For a launched program it waits for the
// program to exit (see ExitCode).
func (s *Stream) Close() error {
	s.closeOnce.Do(func() {
		if s.release != nil {
			s.closeErr = s.release()
		}
	})
	return s.closeErr
}

// stopAfter stops the session after d (0: never); the returned function
// cancels that.
func (s *Stream) stopAfter(d time.Duration) func() {
	if d <= 0 {
		return func() {}
	}
	t := time.AfterFunc(d, s.Stop)
	return func() { t.Stop() }
}

// ExitCode is a launched program's exit status once Close returned: its
// code, 128+N when signal N killed it, or 0 when it died of the SIGTERM
// clrspy sent at the end of Spec.Duration. It is 0 for other streams and
// -1 while the program runs.
func (s *Stream) ExitCode() int {
	if s.prog == nil {
		return 0
	}
	return s.prog.exitCode()
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}
