package procfs

import (
	"fmt"
	"os"
)

// Mem reads a process's memory through /proc/PID/mem (the same user, or
// root, and ptrace's access mode: no tracing, no stop). It never writes.
type Mem struct {
	f   *os.File
	pid int
}

// OpenMem opens pid's memory for reading.
func OpenMem(pid int) (*Mem, error) {
	f, err := os.Open(Dir(pid) + "/mem")
	if err != nil {
		return nil, err
	}
	return &Mem{f: f, pid: pid}, nil
}

// ReadAt reads len(b) bytes at address addr of the process: an error
// (never a short read) when part of the range is not mapped.
func (m *Mem) ReadAt(b []byte, addr int64) (int, error) {
	if addr < 0 {
		// Addresses above 1<<63 are the kernel's: unreadable.
		return 0, fmt.Errorf("process %d: address %#x is not readable", m.pid, uint64(addr))
	}
	n, err := m.f.ReadAt(b, addr)
	if err != nil || n < len(b) {
		return n, fmt.Errorf("process %d: %d bytes at %#x are not readable", m.pid, len(b), uint64(addr))
	}
	return n, nil
}

// Close releases the file.
func (m *Mem) Close() error { return m.f.Close() }
