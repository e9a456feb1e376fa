package source

import (
	"errors"
	"time"

	"github.com/clrspy/clrspy/internal/procfs"
	"github.com/clrspy/clrspy/ipc"
)

// ProcessInfo asks a live stream's runtime for its ProcessInfo (command
// line, runtime version, OS, architecture) on a connection of its own.
func (s *Stream) ProcessInfo() (*ipc.ProcessInfo, error) {
	if !s.Live() || s.Pid <= 0 {
		return nil, errors.New("not a live session")
	}
	if s.client != nil {
		return s.client.ProcessInfo()
	}
	c, err := ipc.Dial(s.Pid)
	if err != nil {
		return nil, err
	}
	return c.ProcessInfo()
}

// ProcessStart is when a live stream's process started (zero for files,
// or when /proc does not say).
func (s *Stream) ProcessStart() time.Time {
	pid := s.procPid()
	if pid <= 0 {
		return time.Time{}
	}
	t, err := procfs.StartTime(pid)
	if err != nil {
		return time.Time{}
	}
	return t
}

// ProcPid is the live target's pid as /proc (and the perf sampler) knows
// it: 0 for files and for a listen-mode runtime not visible in clrspy's
// pid namespace.
func (s *Stream) ProcPid() int { return s.procPid() }

func (s *Stream) procPid() int {
	switch {
	case !s.Live() || s.Pid <= 0:
		return 0
	case s.Kind == Listen:
		return s.hostPid
	}
	return s.Pid
}

// ProcName is the live target's process name (/proc/PID/comm; for a
// listen-mode runtime outside clrspy's pid namespace, from its command
// line), "?" when unknown, "" for files.
func (s *Stream) ProcName() string {
	if !s.Live() {
		return ""
	}
	if pid := s.procPid(); pid > 0 {
		return ProcName(pid)
	}
	if info, err := s.ProcessInfo(); err == nil {
		if n := commandName(info.CommandLine); n != "" {
			return n
		}
	}
	return "?"
}
