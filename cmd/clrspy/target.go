package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/clrspy/clrspy/ipc"
	"github.com/clrspy/clrspy/nettrace"
)

// target is where an analysis command reads its events from: a .nettrace
// file, standard input ("-"), a running process (--pid/--name) or a program
// clrspy starts itself ("-- CMD ARGS"). Every analysis command takes the
// same forms through addTargetFlags and open.
type target struct {
	pid      int
	name     string
	duration time.Duration
	bufferMB uint32
}

// addTargetFlags registers the target flags on cmd.
func addTargetFlags(cmd *cobra.Command) *target {
	t := &target{}
	f := cmd.Flags()
	f.IntVar(&t.pid, "pid", 0, "attach to the .NET process with this id")
	f.StringVar(&t.name, "name", "", "attach to the .NET process with this name")
	f.DurationVar(&t.duration, "duration", 0, "stop a live session after this long (0: until Ctrl-C or the target exits); a program started with -- is then sent SIGTERM")
	f.Uint32Var(&t.bufferMB, "buffer-mb", 256, "runtime-side event buffer of a live session, in MB")
	return t
}

// stream is an opened event source: R yields nettrace bytes.
type stream struct {
	R    io.Reader
	Name string // file name, "stdin", "pid 123" or the launched command
	Live bool
	// Stop ends a live session early (rundown still arrives on R); nil for
	// files.
	Stop func()
	// Close releases everything; for a launched program it waits for it and
	// returns its exit status through ExitCode.
	Close    func() error
	ExitCode func() int
	// Session is the live EventPipe session (nil for files).
	Session *ipc.Session
	// Pid is the traced process (0 for files).
	Pid int
}

// open opens the target. args are the positional arguments: a file name,
// "-", or (after "--", see cmd.ArgsLenAtDash) a command to launch.
// providers are what the analysis needs from a live session.
func (t *target) open(cmd *cobra.Command, args []string, providers []ipc.Provider) (*stream, error) {
	dash := cmd.ArgsLenAtDash()
	switch {
	case dash >= 0:
		if t.pid != 0 || t.name != "" {
			return nil, fmt.Errorf("give either a command after -- or --pid/--name, not both")
		}
		if dash > 0 {
			return nil, fmt.Errorf("unexpected argument %q before --", args[0])
		}
		if len(args) == 0 {
			return nil, fmt.Errorf("no command after --")
		}
		return t.launch(args, providers)
	case t.pid != 0 || t.name != "":
		if len(args) > 0 {
			return nil, fmt.Errorf("give either a trace file or --pid/--name, not both")
		}
		if t.pid != 0 && t.name != "" {
			return nil, fmt.Errorf("give --pid or --name, not both")
		}
		return t.attach(providers)
	case len(args) == 0:
		return nil, fmt.Errorf("no target: give a .nettrace file, '-' for standard input, --pid, --name or -- COMMAND")
	case len(args) > 1:
		return nil, fmt.Errorf("one trace file at a time (got %d arguments)", len(args))
	}
	if t.duration != 0 {
		return nil, fmt.Errorf("--duration applies to live sessions only (--pid, --name or -- COMMAND)")
	}
	if args[0] == "-" {
		return &stream{R: os.Stdin, Name: "stdin", Close: func() error { return nil }, ExitCode: func() int { return 0 }}, nil
	}
	f, err := os.Open(args[0])
	if err != nil {
		return nil, fileError(err)
	}
	if st, err := f.Stat(); err == nil && st.IsDir() {
		f.Close()
		return nil, fmt.Errorf("%s is a directory, not a trace file", args[0])
	}
	// Large files show a progress line on a terminal until closed.
	r, stop := withProgress(f, args[0], inputSize(f))
	closeFile := func() error { stop(); return f.Close() }
	return &stream{R: r, Name: args[0], Close: closeFile, ExitCode: func() int { return 0 }}, nil
}

// finish ends an analysis after its report was written (err is the
// report's own error): a truncated input is a warning, not a failure (the
// report covers every complete event), and a file's close error counts.
func (st *stream) finish(err, endErr, closeErr error) error {
	if endErr != nil {
		fmt.Fprintf(os.Stderr, "clrspy: warning: %v\n", endErr)
	}
	if err == nil && closeErr != nil && !st.Live {
		err = closeErr
	}
	return err
}

// readAll hands every event of r to fn. A truncated stream is not a
// failure: once every complete event went to fn, the truncation comes back
// as endErr (a warning, named after the stream); any other read error is
// err.
func readAll(r *nettrace.Reader, name string, fn func(*nettrace.Event)) (endErr, err error) {
	for {
		ev, e := r.Next()
		switch {
		case e == nil:
			fn(ev)
		case e == io.EOF:
			return nil, nil
		case errors.Is(e, nettrace.ErrTruncated):
			return fmt.Errorf("%s: %w", name, e), nil
		default:
			return nil, fmt.Errorf("%s: %w", name, e)
		}
	}
}

// exitStatus passes a launched program's non-zero exit status on (the
// report is complete either way).
func (st *stream) exitStatus() error {
	if st.ExitCode != nil {
		if code := st.ExitCode(); code != 0 {
			return &exitError{code: code}
		}
	}
	return nil
}

// fileError turns an os error into one plain line.
func fileError(err error) error {
	var pe *os.PathError
	if e, ok := err.(*os.PathError); ok {
		pe = e
	}
	switch {
	case os.IsNotExist(err) && pe != nil:
		return fmt.Errorf("%s: no such file", pe.Path)
	case os.IsPermission(err) && pe != nil:
		return fmt.Errorf("%s: permission denied", pe.Path)
	}
	return err
}
