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
	c, err := ipc.Dial(s.Pid)
	if err != nil {
		return nil, err
	}
	return c.ProcessInfo()
}

// ProcessStart is when a live stream's process started (zero for files,
// or when /proc does not say).
func (s *Stream) ProcessStart() time.Time {
	if !s.Live() || s.Pid <= 0 {
		return time.Time{}
	}
	t, err := procfs.StartTime(s.Pid)
	if err != nil {
		return time.Time{}
	}
	return t
}
