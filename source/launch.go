package source

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/clrspy/clrspy/ipc"
)

// exitGrace is how long Close waits for a launched program to exit once
// its stream has ended.
var exitGrace = 30 * time.Second

// program is a process clrspy started.
type program struct {
	cmd     *exec.Cmd
	exited  chan struct{}
	waitErr error
	// ended is set when clrspy itself sent the SIGTERM that ended it
	// (Spec.Duration): that death is not the program's failure.
	ended atomic.Bool
}

func (p *program) signal(sig os.Signal) {
	if !p.hasExited() {
		p.cmd.Process.Signal(sig)
	}
}

func (p *program) hasExited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

func (p *program) exitCode() int {
	if !p.hasExited() {
		return -1
	}
	code := ExitCode(p.cmd.ProcessState)
	if p.ended.Load() && code == 128+int(syscall.SIGTERM) {
		return 0
	}
	return code
}

// launch starts spec.Argv with a suspending reverse diagnostic port, opens
// the session while the runtime waits, then resumes it, so the session
// sees the program from its first GC on.
func launch(spec *Spec) (*Stream, error) {
	cfg, err := spec.sessionConfig()
	if err != nil {
		return nil, err
	}
	argv := spec.Argv
	port, err := ipc.ListenReverse()
	if err != nil {
		return nil, err
	}
	child := exec.Command(argv[0], argv[1:]...)
	child.Stdin, child.Stdout, child.Stderr = spec.ProgramStdin, spec.ProgramStdout, spec.ProgramStderr
	if child.Stdin == nil {
		child.Stdin = os.Stdin
	}
	if child.Stdout == nil {
		child.Stdout = os.Stdout
	}
	if child.Stderr == nil {
		child.Stderr = os.Stderr
	}
	// The program gets its own process group so that a Ctrl-C reaches
	// clrspy alone: clrspy stops the session (the rundown flushes) and only
	// then passes the signal on. A program killed by Ctrl-C directly would
	// cut its stream. A background group must not read the terminal, so a
	// terminal stdin is relayed through a pipe.
	child.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if spec.ProgramStdinIsTerminal {
		child.Stdin = struct{ io.Reader }{child.Stdin}
		child.WaitDelay = 200 * time.Millisecond
	}
	child.Env = append(os.Environ(), port.EnvVar())
	if err := child.Start(); err != nil {
		port.Close()
		return nil, fmt.Errorf("starting %s: %w", argv[0], launchError(err))
	}
	prog := &program{cmd: child, exited: make(chan struct{})}
	go func() {
		prog.waitErr = child.Wait()
		close(prog.exited)
	}()
	fail := func(err error) (*Stream, error) {
		child.Process.Kill()
		<-prog.exited
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
		c, err := port.AcceptOnly(30 * time.Second)
		got <- accepted{c, err}
	}()
	var client *ipc.Client
	select {
	case a := <-got:
		if a.err != nil {
			return fail(fmt.Errorf("%s: %w", argv[0], a.err))
		}
		client = a.c
	case <-prog.exited:
		port.Close()
		return nil, fmt.Errorf("%s exited (%s) before its .NET runtime connected: is it a .NET program?", argv[0], exitText(prog.waitErr))
	}
	sess, err := client.StartSession(cfg)
	if err != nil {
		return fail(fmt.Errorf("%s: %w", argv[0], err))
	}
	if err := client.ResumeRuntime(); err != nil {
		sess.Close()
		return fail(fmt.Errorf("%s: resuming the runtime: %w", argv[0], err))
	}
	// After startup, waiting long for a reconnect only delays Stop.
	port.SetDialTimeout(5 * time.Second)

	s := &Stream{
		Name: strings.Join(argv, " "), Kind: Launch, Pid: child.Process.Pid,
		in: &countingReader{r: sess}, session: sess, prog: prog,
	}
	s.stop = func() {
		// A program that exited has ended its stream by itself.
		if !prog.hasExited() {
			sess.Stop()
		}
	}
	// Spec.Duration ends a launched program as a first SIGTERM would: the
	// report comes after the duration, not whenever the program would have
	// exited.
	var timer *time.Timer
	if spec.Duration > 0 {
		timer = time.AfterFunc(spec.Duration, func() {
			if prog.hasExited() {
				return
			}
			prog.ended.Store(true)
			spec.notice("--duration %v reached: stopping the session, then sending SIGTERM to %s (pid %d)",
				spec.Duration, argv[0], child.Process.Pid)
			s.stopRequested.Store(true)
			s.stop()
			prog.signal(syscall.SIGTERM)
		})
	}
	var once sync.Once
	s.release = func() error {
		var err error
		once.Do(func() {
			if timer != nil {
				timer.Stop()
			}
			// The program's exit status is the command's, so wait for it;
			// but a program that hangs in its exit (seen with .NET 10 after
			// a metrics session) must not hang clrspy forever.
			select {
			case <-prog.exited:
			case <-time.After(exitGrace):
				spec.notice("%s (pid %d) has not exited %v after its session ended: killing it", argv[0], child.Process.Pid, exitGrace)
				child.Process.Kill()
				<-prog.exited
			}
			err = sess.Close()
			port.Close()
		})
		return err
	}
	return s, nil
}

func launchError(err error) error {
	var ee *exec.Error
	if errors.As(err, &ee) {
		return ee.Err
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// ExitCode is the shell's view of a finished process: its status, or 128+N
// when signal N killed it; -1 when unknown.
func ExitCode(ps *os.ProcessState) int {
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
