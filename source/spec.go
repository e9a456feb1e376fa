package source

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/clrspy/clrspy/ipc"
	"github.com/clrspy/clrspy/nettrace"
)

// Kind says where a stream comes from.
type Kind uint8

// Kinds of streams.
const (
	File   Kind = iota + 1 // a trace file
	Stdin                  // a trace on standard input ("-")
	Attach                 // a session on a running process
	Launch                 // a session on a program clrspy started
	Listen                 // a session on a runtime that connected to a diagnostic port
)

func (k Kind) String() string {
	switch k {
	case File:
		return "file"
	case Stdin:
		return "stdin"
	case Attach:
		return "attach"
	case Launch:
		return "launch"
	case Listen:
		return "listen"
	}
	return "unknown"
}

// Live reports whether the kind is a live session.
func (k Kind) Live() bool { return k >= Attach }

// Spec says what to open. Exactly one of File, Pid, Name and Argv is set.
type Spec struct {
	// File is a trace file, or "-" for Stdin.
	File string
	// Stdin is read when File is "-" (nil: nothing, an empty stream).
	Stdin io.Reader
	// Pid and Name attach to a running process.
	Pid  int
	Name string
	// Argv starts a program with the runtime suspended until the session
	// is open, so not one event from startup is missed.
	Argv []string

	// Providers are what the session enables (live streams only).
	Providers []ipc.Provider
	// BufferMB is the runtime-side buffer of the session (0: 256).
	BufferMB uint32
	// ReadEvery paces a live session's reads: after a read that drained
	// the connection, the next waits until ReadEvery has passed, so the
	// runtime's flushes (about ten a second) arrive in one read instead of
	// one wake-up each; the session's buffer holds what comes in between.
	// For daemons watching many processes (clrspy serve: 500 ms); 0 reads
	// as data comes.
	ReadEvery time.Duration
	// NoStackwalk asks for events without stacks (cheaper for the target;
	// needs CollectTracing3, .NET 6+).
	NoStackwalk bool
	// Duration stops a live session after this long; a launched program is
	// then sent SIGTERM. 0: until Stop, the target's exit or a signal.
	Duration time.Duration

	// ProgramStdin, ProgramStdout and ProgramStderr are a launched
	// program's standard streams (nil: clrspy's own).
	ProgramStdin           io.Reader
	ProgramStdout          io.Writer
	ProgramStderr          io.Writer
	ProgramStdinIsTerminal bool // relay ProgramStdin through a pipe (the program runs in its own process group)

	// Tee receives every byte of the stream before it is decoded (the
	// faithful copy `record` writes).
	Tee io.Writer
	// Threads decodes a file (or stdin) on this many goroutines (0 or 1:
	// one; nettrace.Options.Threads). Live sessions are read on one.
	Threads int
	// Keep says which events the analyses use (nettrace.Options.Keep):
	// of the others a file's reader delivers only the ends of each run,
	// enough for the stream's clock and lost-event counts. nil: every
	// event. Live sessions deliver every event.
	Keep func(*nettrace.Metadata) bool

	// Notice receives one-line notices meant for the user (the duration
	// ran out, the target exited); nil drops them.
	Notice func(string)
}

// Kind is the kind of stream the spec opens, or an error saying why the
// spec is contradictory or empty (one line, in the flags' words).
func (s *Spec) Kind() (Kind, error) {
	n := 0
	for _, set := range []bool{s.File != "", s.Pid != 0, s.Name != "", len(s.Argv) > 0} {
		if set {
			n++
		}
	}
	switch {
	case n == 0:
		return 0, errors.New("no target: give a .nettrace file, '-' for standard input, --pid, --name or -- COMMAND")
	case len(s.Argv) > 0 && n > 1:
		if s.File != "" {
			return 0, fmt.Errorf("unexpected argument %q before --", s.File)
		}
		return 0, errors.New("give either a command after -- or --pid/--name, not both")
	case s.File != "" && n > 1:
		return 0, errors.New("give either a trace file or --pid/--name, not both")
	case n > 1:
		return 0, errors.New("give --pid or --name, not both")
	case s.Pid < 0:
		return 0, fmt.Errorf("--pid %d: a process id is positive", s.Pid)
	case s.Duration < 0:
		return 0, fmt.Errorf("--duration %v: must not be negative", s.Duration)
	}
	switch {
	case len(s.Argv) > 0:
		return Launch, nil
	case s.Pid != 0 || s.Name != "":
		return Attach, nil
	}
	if s.Duration != 0 {
		return 0, errors.New("--duration applies to live sessions only (--pid, --name or -- COMMAND)")
	}
	if s.File == "-" {
		return Stdin, nil
	}
	return File, nil
}

func (s *Spec) notice(format string, args ...any) {
	if s.Notice != nil {
		s.Notice(fmt.Sprintf(format, args...))
	}
}

func (s *Spec) sessionConfig() (ipc.SessionConfig, error) {
	if len(s.Providers) == 0 {
		return ipc.SessionConfig{}, errors.New("this command names no providers for a live session")
	}
	return ipc.SessionConfig{Providers: s.Providers, BufferMB: s.BufferMB, NoStackwalk: s.NoStackwalk}, nil
}

// resetsTypeLog reports whether an attach session of s first makes the
// runtime forget which types it has named (ipc.Client.ResetTypeLog): a
// heap dump (the runtime provider with the Type and GCHeapDump keywords:
// clrspy snapshot, record --profile gcdump, serve's snapshots), so it
// names every type even when another session is open on the process.
func (s *Spec) resetsTypeLog() bool {
	const dump = ipc.KeywordType | ipc.KeywordGCHeapDump
	for _, p := range s.Providers {
		if p.Name == nettrace.ProviderRuntime && p.Keywords&dump == dump {
			return true
		}
	}
	return false
}
