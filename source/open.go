package source

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/clrspy/clrspy/internal/procfs"
	"github.com/clrspy/clrspy/ipc"
	"github.com/clrspy/clrspy/nettrace"
)

// Open opens what spec names and reads the stream's header. For a live
// target the session is running when Open returns (a launched program has
// been resumed); read the stream to its end, then Close.
func Open(spec Spec) (*Stream, error) {
	kind, err := spec.Kind()
	if err != nil {
		return nil, err
	}
	var s *Stream
	switch kind {
	case File:
		s, err = openFile(&spec)
	case Stdin:
		s, err = openStdin(&spec)
	case Attach:
		s, err = attach(&spec)
	case Launch:
		s, err = launch(&spec)
	}
	if err != nil {
		return nil, err
	}
	if err := s.start(&spec); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// start reads the header through the counting (and teeing) reader.
func (s *Stream) start(spec *Spec) error {
	if spec.ReadEvery > 0 && s.Live() {
		s.in.r = &pacedReader{r: s.in.r, every: spec.ReadEvery}
	}
	if spec.Tee != nil {
		s.in.r = io.TeeReader(s.in.r, spec.Tee)
	}
	// Files (and stdin) are decoded on spec.Threads goroutines; a live
	// session stays on one: its rate is the runtime's, and a pipeline
	// would only add latency to what live views show.
	var opt nettrace.Options
	if !s.Live() {
		opt.Threads, opt.Keep = spec.Threads, spec.Keep
	}
	r, err := nettrace.NewReaderOptions(s.in, opt)
	if err != nil {
		if s.in.n.Load() == 0 {
			if s.Live() {
				return fmt.Errorf("%s: the session ended before it sent anything", s.Name)
			}
			return fmt.Errorf("%s: empty file", s.Name)
		}
		return fmt.Errorf("%s: %w", s.Name, err)
	}
	s.r = r
	return nil
}

func openFile(spec *Spec) (*Stream, error) {
	f, err := os.Open(spec.File)
	if err != nil {
		return nil, FileError(err)
	}
	st, err := f.Stat()
	if err == nil && st.IsDir() {
		f.Close()
		return nil, fmt.Errorf("%s is a directory, not a trace file", spec.File)
	}
	s := &Stream{Name: spec.File, Kind: File, in: &countingReader{r: f}, release: f.Close}
	if err == nil && st.Mode().IsRegular() {
		s.size = st.Size()
	}
	return s, nil
}

func openStdin(spec *Spec) (*Stream, error) {
	in := spec.Stdin
	if in == nil {
		in = strings.NewReader("")
	}
	s := &Stream{Name: "stdin", Kind: Stdin, in: &countingReader{r: in}}
	if f, ok := in.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			s.size = st.Size()
		}
	}
	return s, nil
}

// attach opens a session on a running process.
func attach(spec *Spec) (*Stream, error) {
	cfg, err := spec.sessionConfig()
	if err != nil {
		return nil, err
	}
	pid := spec.Pid
	if spec.Name != "" {
		if pid, err = ipc.FindByName(spec.Name); err != nil {
			return nil, err
		}
	}
	c, err := ipc.Dial(pid)
	if err != nil {
		return nil, err
	}
	if c.Notice != "" {
		// Root attaching to another user's process: say so, once.
		spec.notice("%s", c.Notice)
	}
	if spec.resetsTypeLog() {
		if err := c.ResetTypeLog(); err != nil {
			spec.notice("pid %d: could not make the runtime forget the types it named (%v): types another session already saw may be unnamed", pid, err)
		}
	}
	sess, err := c.StartSession(cfg)
	if err != nil {
		if ae := (*ipc.AttachError)(nil); errors.As(err, &ae) {
			return nil, err // it names the pid already
		}
		return nil, fmt.Errorf("pid %d: %w", pid, err)
	}
	s := &Stream{
		Name: fmt.Sprintf("pid %d (%s)", pid, ProcName(pid)), Kind: Attach, Pid: pid,
		in: &countingReader{r: sess}, session: sess,
	}
	s.stop = func() { sess.Stop() }
	var timer *time.Timer
	if spec.Duration > 0 {
		timer = time.AfterFunc(spec.Duration, s.Stop)
	}
	s.release = func() error {
		if timer != nil {
			timer.Stop()
		}
		return sess.Close()
	}
	return s, nil
}

// ProcName is a process's name (/proc/PID/comm), or "?".
func ProcName(pid int) string {
	if n := procfs.Comm(pid, 0); n != "" {
		return n
	}
	return "?"
}

// FileError turns an os error about a path into one plain line.
func FileError(err error) error {
	var pe *os.PathError
	if !errors.As(err, &pe) {
		return err
	}
	switch {
	case errors.Is(err, os.ErrNotExist):
		return &plainError{pe.Path + ": no such file", err}
	case errors.Is(err, os.ErrPermission):
		return &plainError{pe.Path + ": permission denied", err}
	}
	return err
}

// plainError is a one-line message that still unwraps to its cause.
type plainError struct {
	msg string
	err error
}

func (e *plainError) Error() string { return e.msg }
func (e *plainError) Unwrap() error { return e.err }

// pacedReader waits before a read that follows one that drained its
// source (returned less than asked), until every has passed since then:
// a busy stream is read at full speed, a trickle in batches.
type pacedReader struct {
	r       io.Reader
	every   time.Duration
	drained time.Time // when the last short read returned (zero: none)
}

func (p *pacedReader) Read(b []byte) (int, error) {
	if !p.drained.IsZero() {
		if wait := p.every - time.Since(p.drained); wait > 0 {
			time.Sleep(wait)
		}
		p.drained = time.Time{}
	}
	n, err := p.r.Read(b)
	if n < len(b) {
		p.drained = time.Now()
	}
	return n, err
}
