package procfs

import (
	"fmt"
	"os"
	"syscall"
)

// OpenRegular opens path for reading without ever blocking on it: the
// open is O_NONBLOCK (a FIFO opens at once instead of waiting for a
// writer; a device or FIFO never hangs the caller), O_NOCTTY, then the
// descriptor is checked with fstat: anything but a regular file, or one
// larger than maxSize (0: no bound), is refused in one line. For the
// paths clrspy reads because an input named them (a trace's or a
// .gcdump's module paths, a live runtime's, perf maps in /tmp), which
// anyone may have made a FIFO.
func OpenRegular(path string, maxSize int64) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	switch {
	case !st.Mode().IsRegular():
		f.Close()
		return nil, fmt.Errorf("%s: %s, not a regular file: not read", path, FileKind(st.Mode()))
	case maxSize > 0 && st.Size() > maxSize:
		f.Close()
		return nil, fmt.Errorf("%s: %d bytes, over the %d read from such a file", path, st.Size(), maxSize)
	}
	return f, nil
}

// FileKind names what a file that is not a regular one is: a named
// pipe, a character device, a device, a socket, a directory or a special
// file (the article in front).
func FileKind(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a device"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m.IsDir():
		return "a directory"
	}
	return "a special file"
}
