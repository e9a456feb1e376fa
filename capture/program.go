package capture

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
)

// Program is a program a command starts to look at by pid, outside a
// session from its first instruction (`memory -- COMMAND`, `snapshot --
// COMMAND`): its standard input is clrspy's, its output goes to stdout.
type Program struct {
	Pid    int
	Exited chan struct{} // closed once it has exited
	cmd    *exec.Cmd
	code   int
}

// StartProgram starts argv.
func StartProgram(argv []string, stdout io.Writer) (*Program, error) {
	p := &Program{cmd: exec.Command(argv[0], argv[1:]...), Exited: make(chan struct{})}
	p.cmd.Stdin, p.cmd.Stdout, p.cmd.Stderr = os.Stdin, stdout, os.Stderr
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", argv[0], err)
	}
	p.Pid = p.cmd.Process.Pid
	go func() {
		if err := p.cmd.Wait(); err != nil {
			if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() > 0 {
				p.code = ee.ExitCode()
			}
		}
		close(p.Exited)
	}()
	return p, nil
}

// ExitCode is the program's exit status once it has exited (0: still
// running, or exited 0 or by a signal).
func (p *Program) ExitCode() int {
	select {
	case <-p.Exited:
		return p.code
	default:
		return 0
	}
}

// Stop sends the program SIGTERM unless it has exited, and waits for it.
func (p *Program) Stop() {
	select {
	case <-p.Exited:
	default:
		p.cmd.Process.Signal(syscall.SIGTERM)
		<-p.Exited
	}
}
