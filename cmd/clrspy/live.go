package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/clrspy/clrspy/ipc"
)

// sessionConfig is the session every live target opens.
func (t *target) sessionConfig(providers []ipc.Provider) (ipc.SessionConfig, error) {
	if len(providers) == 0 {
		return ipc.SessionConfig{}, errors.New("this command names no providers for a live session")
	}
	return ipc.SessionConfig{Providers: providers, BufferMB: t.bufferMB}, nil
}

// attach opens a session on a running process.
func (t *target) attach(providers []ipc.Provider) (*stream, error) {
	cfg, err := t.sessionConfig(providers)
	if err != nil {
		return nil, err
	}
	pid := t.pid
	if t.name != "" {
		if pid, err = ipc.FindByName(t.name); err != nil {
			return nil, err
		}
	}
	c, err := ipc.Dial(pid)
	if err != nil {
		return nil, err
	}
	if c.Notice != "" {
		fmt.Fprintf(os.Stderr, "clrspy: %s\n", c.Notice)
	}
	s, err := c.StartSession(cfg)
	if err != nil {
		return nil, fmt.Errorf("pid %d: %v", pid, err)
	}
	st := &stream{R: s, Name: fmt.Sprintf("pid %d (%s)", pid, procName(pid)), Live: true, Session: s, Pid: pid}
	st.Stop = func() { s.Stop() }
	stopSignals := t.watch(st, nil)
	st.Close = func() error {
		stopSignals()
		return s.Close()
	}
	st.ExitCode = func() int { return 0 }
	return st, nil
}

// launch starts argv with a suspending reverse diagnostic port, opens the
// session while the runtime waits, then resumes it, so the session sees the
// program from its first GC on.
func (t *target) launch(argv []string, providers []ipc.Provider) (*stream, error) {
	cfg, err := t.sessionConfig(providers)
	if err != nil {
		return nil, err
	}
	port, err := ipc.ListenReverse()
	if err != nil {
		return nil, err
	}
	child := exec.Command(argv[0], argv[1:]...)
	child.Stdout, child.Stderr = os.Stdout, os.Stderr
	// The program gets its own process group so that a Ctrl-C reaches
	// clrspy alone: clrspy stops the session (the rundown flushes) and only
	// then passes the signal on. A program killed by Ctrl-C directly would
	// cut its stream. A background group must not read the terminal, so a
	// terminal stdin is relayed through a pipe.
	child.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	child.Stdin = os.Stdin
	if isTerminal(os.Stdin) {
		child.Stdin = struct{ io.Reader }{os.Stdin}
		child.WaitDelay = 200 * time.Millisecond
	}
	child.Env = append(os.Environ(), port.EnvVar())
	if err := child.Start(); err != nil {
		port.Close()
		return nil, fmt.Errorf("starting %s: %v", argv[0], launchError(err))
	}
	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = child.Wait()
		close(exited)
	}()
	fail := func(err error) (*stream, error) {
		child.Process.Kill()
		<-exited
		port.Close()
		return nil, err
	}

	// The runtime connects once it has started; a program that is not a
	// .NET one (or exits first) never does.
	type accepted struct {
		c   *ipc.Client
		err error
	}
	got := make(chan accepted, 1)
	go func() {
		c, err := port.Client()
		got <- accepted{c, err}
	}()
	var client *ipc.Client
	select {
	case a := <-got:
		if a.err != nil {
			return fail(fmt.Errorf("%s: %v", argv[0], a.err))
		}
		client = a.c
	case <-exited:
		port.Close()
		return nil, fmt.Errorf("%s exited (%s) before its .NET runtime connected: is it a .NET program?", argv[0], exitText(waitErr))
	}
	s, err := client.StartSession(cfg)
	if err != nil {
		return fail(fmt.Errorf("%s: %v", argv[0], err))
	}
	if err := client.ResumeRuntime(); err != nil {
		s.Close()
		return fail(fmt.Errorf("%s: resuming the runtime: %v", argv[0], err))
	}
	// After startup, waiting long for a reconnect only delays Stop.
	port.AcceptTimeout = 5 * time.Second

	st := &stream{R: s, Name: strings.Join(argv, " "), Live: true, Session: s, Pid: child.Process.Pid}
	st.Stop = func() {
		select {
		case <-exited:
			// The stream ends by itself when the program exits.
		default:
			s.Stop()
		}
	}
	// A SIGTERM sent to clrspy alone is passed on once the session has
	// stopped (the stop returns after the rundown is written), so the
	// program ends without cutting the stream.
	// A signal stops the session first (Stop returns once the rundown is
	// written), then goes on to the program, which ends, and the stream
	// with it. A second signal is passed on at once.
	stopSignals := t.watch(st, func(sig os.Signal, first bool) {
		if !first {
			child.Process.Signal(sig)
			return
		}
		go func() {
			st.Stop()
			child.Process.Signal(sig)
		}()
	})
	// --duration ends a launched program as a first SIGTERM would: the
	// report comes after the duration, not whenever the program would
	// have exited. The program's death by that SIGTERM is not a failure.
	var ended atomic.Bool
	if t.duration > 0 {
		timer := time.AfterFunc(t.duration, func() {
			select {
			case <-exited:
				return
			default:
			}
			ended.Store(true)
			fmt.Fprintf(os.Stderr, "clrspy: --duration %v reached: stopping the session, then sending SIGTERM to %s (pid %d)\n",
				t.duration, argv[0], child.Process.Pid)
			st.Stop()
			child.Process.Signal(syscall.SIGTERM)
		})
		stopWatch := stopSignals
		stopSignals = func() { timer.Stop(); stopWatch() }
	}
	var once sync.Once
	var closeErr error
	st.Close = func() error {
		once.Do(func() {
			stopSignals()
			<-exited
			closeErr = s.Close()
			port.Close()
		})
		return closeErr
	}
	st.ExitCode = func() int {
		select {
		case <-exited:
		default:
			return -1
		}
		code := exitCode(child.ProcessState)
		if ended.Load() && code == 128+int(syscall.SIGTERM) {
			return 0
		}
		return code
	}
	return st, nil
}

// watch stops the session on SIGINT/SIGTERM (the rundown then flushes
// through the stream) and, when attached, after --duration. A second signal drops the
// session at once. onSignal, when set, handles the first signal instead.
// It returns a function that undoes it.
func (t *target) watch(st *stream, onSignal func(sig os.Signal, first bool)) func() {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	done := make(chan struct{})
	var timer *time.Timer
	if t.duration > 0 && onSignal == nil { // a launch handles its own
		timer = time.AfterFunc(t.duration, st.Stop)
	}
	go func() {
		n := 0
		for {
			select {
			case sig := <-sigs:
				n++
				if n == 1 && onSignal != nil {
					onSignal(sig, true)
				} else if n == 1 {
					go st.Stop()
				} else {
					if onSignal != nil {
						onSignal(sig, false)
					}
					if st.Session != nil {
						st.Session.Close()
					}
				}
			case <-done:
				return
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			signal.Stop(sigs)
			if timer != nil {
				timer.Stop()
			}
			close(done)
		})
	}
}

func procName(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(b))
}

func launchError(err error) error {
	var ee *exec.Error
	if errors.As(err, &ee) {
		return fmt.Errorf("%v", ee.Err)
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// exitCode is the shell's view of a finished process: its status, or 128+N
// when signal N killed it.
func exitCode(ps *os.ProcessState) int {
	if ps == nil {
		return -1
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

func exitText(err error) string {
	if err == nil {
		return "status 0"
	}
	return err.Error()
}

// isTerminal reports whether f is a terminal (a character device).
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
