package perf

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/ipc"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/stacks"
)

// ProfileOptions is what Start and Profile need besides the pid.
type ProfileOptions struct {
	Options
	// Duration bounds Profile (0: until its context ends or the process
	// exits).
	Duration time.Duration
	// NoSession skips the EventPipe session: managed frames are then named
	// only from a perf map, and samples get no GC labels.
	NoSession bool
	// PerfMap asks the runtime (.NET 8+, diagnostics IPC EnablePerfMap) to
	// write /tmp/perf-PID.map while profiling, a second source of names
	// for JIT'd code and the runtime's stubs; it is switched off again at
	// the end (the file stays).
	PerfMap bool

	// compareFP also builds a profile from frame pointers alone (tests).
	compareFP bool
}

// SessionProviders is the EventPipe configuration of the session opened
// with the sampler: GC events (suspensions and GC numbers for labels) and
// method/module loads (names of JIT'd code), informational level, no
// stacks; the default rundown at the end names what was compiled before.
var SessionProviders = clrevents.ProvidersFor(gcpause.Wants, stacks.SymbolsWant)

// Session is a running mixed-mode profile of one process: the perf
// sampler and, unless disabled, an EventPipe session for names and GC
// labels.
type Session struct {
	pid     int
	cfg     ProfileOptions
	sampler *Sampler
	builder *Builder
	fp      *Builder // frame pointers only, with ProfileOptions.compareFP
	syms    *stacks.Symbols

	client *ipc.Client
	ep     *ipc.Session
	reader *nettrace.Reader

	cancel     context.CancelFunc
	samplerEnd chan struct{}
	samplerErr error
	readerEnd  chan struct{}
	readerErr  error
	events     uint64

	notes    []string
	stopOnce sync.Once
	profile  *stacks.Profile
	err      error
}

// Start begins profiling pid: it checks access (an *UnavailableError
// says why not, in one line), opens the sampler and the EventPipe session,
// and samples until Stop or the process's exit.
func Start(pid int, cfg ProfileOptions) (*Session, error) {
	// Everything slow happens before the events exist: the session's
	// header, reading the mapped files. Samples start once nothing but
	// the reader stands between them and the rings.
	acc, err := Check(pid, cfg.Options)
	if err != nil {
		return nil, err
	}
	cfg.Options.defaults()
	s := &Session{pid: pid, cfg: cfg, samplerEnd: make(chan struct{}), readerEnd: make(chan struct{})}
	if acc.Note != "" {
		s.notes = append(s.notes, acc.Note)
	}
	var hdr *nettrace.Header
	if !cfg.NoSession {
		if err := s.openSession(); err != nil {
			s.notes = append(s.notes, fmt.Sprintf("no EventPipe session (%v): managed frames named from the perf map only, no GC labels", err))
		} else {
			hdr = s.reader.Header()
			s.syms = stacks.NewSymbols(hdr)
		}
	}
	if cfg.PerfMap {
		if s.client == nil {
			s.client, err = ipc.Dial(pid)
		}
		if err == nil {
			err = s.client.EnablePerfMap(ipc.PerfMapPerfMap)
		}
		if err != nil {
			s.notes = append(s.notes, fmt.Sprintf("perf map not enabled: %v", err))
			s.cfg.PerfMap = false
		}
	}
	s.builder, err = NewBuilder(pid, hdr, s.syms, BuilderOptions{Hz: cfg.Hz, Cycles: cfg.Event == "cycles", OffCPU: acc.OffCPU})
	if err != nil {
		s.abort()
		return nil, err
	}
	s.builder.proc.LoadAll()
	if s.sampler, err = Open(pid, cfg.Options); err != nil {
		s.abort()
		return nil, err
	}
	s.builder.opts.OffCPU = s.sampler.Access().OffCPU
	sample := s.builder.Sample
	if cfg.compareFP {
		if s.fp, err = NewBuilder(pid, hdr, s.syms, BuilderOptions{Hz: cfg.Hz, FramePointers: true}); err != nil {
			s.abort()
			return nil, err
		}
		sample = func(sm *Sample) {
			s.builder.Sample(sm)
			s.fp.Sample(sm)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	go func() {
		defer close(s.samplerEnd)
		s.samplerErr = s.sampler.Run(ctx, sample)
	}()
	go s.read()
	return s, nil
}

// openSession starts the EventPipe session and reads its header.
func (s *Session) openSession() error {
	c, ep, r, err := openSymbolSession(s.pid)
	if c != nil {
		s.client = c
	}
	if err != nil {
		return err
	}
	s.ep, s.reader = ep, r
	return nil
}

// openSymbolSession starts the session of SessionProviders on pid and
// reads its header (the client is returned once dialled, even on error).
func openSymbolSession(pid int) (*ipc.Client, *ipc.Session, *nettrace.Reader, error) {
	c, err := ipc.Dial(pid)
	if err != nil {
		return nil, nil, nil, err
	}
	ep, err := c.StartSession(ipc.SessionConfig{Providers: SessionProviders, NoStackwalk: true})
	if err != nil {
		// Runtimes before CollectTracing3 cannot drop stacks.
		ep, err = c.StartSession(ipc.SessionConfig{Providers: SessionProviders})
	}
	if err != nil {
		return c, nil, nil, err
	}
	r, err := nettrace.NewReader(ep)
	if err != nil {
		ep.Close()
		return c, nil, nil, fmt.Errorf("reading the session: %w", err)
	}
	return c, ep, r, nil
}

// read feeds the session's events to the symbol table and the builder.
func (s *Session) read() {
	defer close(s.readerEnd)
	if s.reader == nil {
		return
	}
	for {
		ev, err := s.reader.Next()
		if err != nil {
			if err != io.EOF {
				s.readerErr = err
			}
			return
		}
		s.events++
		s.syms.Event(ev)
		s.builder.Event(ev)
		if s.fp != nil {
			s.fp.Event(ev)
		}
	}
}

// Done is closed when sampling ended on its own: the process exited.
func (s *Session) Done() <-chan struct{} { return s.samplerEnd }

// rundownTimeout bounds the wait for the session's rundown after Stop.
const rundownTimeout = 30 * time.Second

// Stop ends sampling and the EventPipe session (whose rundown names code
// compiled before it began), and returns the profile. A process that
// exited mid-profile gives the profile of what was collected. Calling Stop
// again returns the same result.
func (s *Session) Stop() (*stacks.Profile, error) {
	s.stopOnce.Do(func() { s.profile, s.err = s.stop() })
	return s.profile, s.err
}

func (s *Session) stop() (*stacks.Profile, error) {
	s.cancel()
	<-s.samplerEnd
	// No more samples: the target stops paying for them during the
	// rundown.
	s.sampler.Close()
	if s.ep != nil {
		stopErr := make(chan error, 1)
		go func() { stopErr <- s.ep.Stop() }()
		select {
		case <-s.readerEnd:
		case <-time.After(rundownTimeout):
			s.notes = append(s.notes, "the EventPipe session did not end within 30 s: names from its rundown may be missing")
		}
		s.ep.Close()
		<-s.readerEnd
		select {
		case err := <-stopErr:
			_ = err // the stream's end is what counts; a gone process cannot answer
		default:
		}
	}
	if s.cfg.PerfMap && s.client != nil {
		s.client.DisablePerfMap()
	}
	if s.readerErr != nil && !errors.Is(s.readerErr, nettrace.ErrTruncated) {
		s.notes = append(s.notes, fmt.Sprintf("EventPipe session: %v", s.readerErr))
	}
	s.builder.Finish()
	p := s.builder.Result()
	s.builder.Close()
	if s.fp != nil {
		s.fp.Finish()
	}
	st := s.sampler.Stats()
	p.Lost = int64(st.Lost)
	if st.Lost > 0 {
		s.notes = append(s.notes, fmt.Sprintf("%d samples lost: the ring buffers (%d KiB per CPU) overflowed", st.Lost, st.RingBytes>>10))
	}
	if st.OpenErrors > 0 {
		s.notes = append(s.notes, fmt.Sprintf("%d threads not sampled: %v", st.OpenErrors, st.FirstError))
	}
	s.notes = append(s.notes, s.sampler.OffCPUNotes()...)
	p.Notes = append(p.Notes, s.notes...)
	if s.samplerErr != nil {
		return p, s.samplerErr
	}
	return p, nil
}

// abort releases everything after a failed Start.
func (s *Session) abort() {
	if s.ep != nil {
		s.ep.Close()
	}
	if s.cfg.PerfMap && s.client != nil {
		s.client.DisablePerfMap()
	}
	if s.sampler != nil {
		s.sampler.Close()
	}
	if s.builder != nil {
		s.builder.Close()
	}
}

// Stats are the sampler's counters so far.
func (s *Session) Stats() Stats { return s.sampler.Stats() }

// Exited reports whether the process exited during the profile.
func (s *Session) Exited() bool {
	select {
	case <-s.samplerEnd:
		return s.sampler.Exited()
	default:
		return false
	}
}

// UnwindStats are the builder's walk counters so far.
func (s *Session) UnwindStats() UnwindStats { return s.builder.UnwindStats() }

// Events counts the EventPipe session's events read so far.
func (s *Session) Events() uint64 { return s.events }

// Profile samples pid until ctx is done, cfg.Duration passes or the
// process exits, and returns the profile. Errors before sampling starts
// are *UnavailableError when perf_event cannot be used (the one-line
// reason for a fallback note).
func Profile(ctx context.Context, pid int, cfg ProfileOptions) (*stacks.Profile, error) {
	s, err := Start(pid, cfg)
	if err != nil {
		return nil, err
	}
	if cfg.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.Duration)
		defer cancel()
	}
	select {
	case <-ctx.Done():
	case <-s.Done():
	}
	return s.Stop()
}
