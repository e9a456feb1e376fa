package ipc

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"time"
)

// advertiseSize is the runtime's greeting on a reverse connection:
// "ADVR_V1\0", the runtime cookie, the pid and two reserved bytes.
const advertiseSize = 34

var advertiseMagic = [8]byte{'A', 'D', 'V', 'R', '_', 'V', '1', 0}

// Advertise is what a runtime says when it connects to a reverse port.
type Advertise struct {
	Cookie [16]byte
	Pid    uint64
}

// ParseAdvertise decodes the 34-byte advertise message.
func ParseAdvertise(b []byte) (Advertise, error) {
	var a Advertise
	if len(b) < advertiseSize {
		return a, fmt.Errorf("advertise message of %d bytes, want %d", len(b), advertiseSize)
	}
	if [8]byte(b[:8]) != advertiseMagic {
		return a, fmt.Errorf("reverse connection does not start with ADVR_V1")
	}
	copy(a.Cookie[:], b[8:24])
	a.Pid = binary.LittleEndian.Uint64(b[24:32])
	return a, nil
}

// readAdvertise reads and decodes a reverse connection's first bytes:
// the one handshake of every reverse port.
func readAdvertise(c net.Conn) (Advertise, error) {
	c.SetReadDeadline(time.Now().Add(replyTimeout))
	var b [advertiseSize]byte
	if _, err := io.ReadFull(c, b[:]); err != nil {
		return Advertise{}, fmt.Errorf("reading the runtime's advertise: %w", err)
	}
	c.SetReadDeadline(time.Time{})
	return ParseAdvertise(b[:])
}

// ListenReverse creates a reverse port for one program clrspy starts (launch
// mode) in a fresh private directory, removed by Close. AcceptOnly takes the
// program's runtime.
func ListenReverse() (*ReverseServer, error) {
	dir, err := os.MkdirTemp("", "clrspy-")
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "port.sock")
	if len(path) >= maxSunPath {
		os.RemoveAll(dir)
		dir, err = os.MkdirTemp("/tmp", "clrspy-")
		if err != nil {
			return nil, err
		}
		path = filepath.Join(dir, "port.sock")
	}
	s, err := ListenReverseAt(path, 0)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s.tmpdir = dir
	return s, nil
}

// AcceptOnly waits up to timeout for the first runtime to connect and
// returns its Client; every later runtime (a child process inherits
// DOTNET_DiagnosticPorts and would wait, suspended, forever) is resumed
// at once, until the port closes. For a port that serves one program.
func (s *ReverseServer) AcceptOnly(timeout time.Duration) (*Client, error) {
	type accepted struct {
		r   *ReverseRuntime
		err error
	}
	got := make(chan accepted, 1)
	go func() {
		r, err := s.Accept()
		got <- accepted{r, err}
		if err != nil {
			return
		}
		for {
			other, err := s.Accept()
			if err != nil {
				return
			}
			go other.Client.ResumeRuntime()
		}
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case a := <-got:
		if a.err != nil {
			return nil, a.err
		}
		return a.r.Client, nil
	case <-timer.C:
		return nil, fmt.Errorf("the runtime did not connect to %s within %v", s.Path, timeout)
	}
}
