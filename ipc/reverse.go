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

// ReversePort is a Unix socket clrspy listens on and a runtime started with
// DOTNET_DiagnosticPorts=PATH connects to. Each connection carries one
// command; the runtime reconnects for the next.
type ReversePort struct {
	Path string
	ln   *net.UnixListener
	dir  string
	// AcceptTimeout bounds the wait for the runtime's next connection.
	AcceptTimeout time.Duration
}

// ListenReverse creates a reverse port in a fresh private directory.
func ListenReverse() (*ReversePort, error) {
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
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("listening on %s: %w", path, err)
	}
	return &ReversePort{Path: path, ln: ln, dir: dir, AcceptTimeout: 30 * time.Second}, nil
}

// EnvVar is the environment entry that makes a runtime connect here and
// wait, suspended, for ResumeRuntime.
func (p *ReversePort) EnvVar() string {
	return "DOTNET_DiagnosticPorts=" + p.Path + ",connect,suspend"
}

// Accept waits for the runtime's next connection and reads its advertise.
func (p *ReversePort) Accept() (net.Conn, Advertise, error) {
	if p.AcceptTimeout > 0 {
		p.ln.SetDeadline(time.Now().Add(p.AcceptTimeout))
	}
	c, err := p.ln.Accept()
	if err != nil {
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			return nil, Advertise{}, fmt.Errorf("the runtime did not connect to %s within %v", p.Path, p.AcceptTimeout)
		}
		return nil, Advertise{}, err
	}
	c.SetReadDeadline(time.Now().Add(replyTimeout))
	var b [advertiseSize]byte
	if _, err := io.ReadFull(c, b[:]); err != nil {
		c.Close()
		return nil, Advertise{}, fmt.Errorf("reading the runtime's advertise: %w", err)
	}
	c.SetReadDeadline(time.Time{})
	a, err := ParseAdvertise(b[:])
	if err != nil {
		c.Close()
		return nil, a, err
	}
	return c, a, nil
}

// Client returns a Client whose connections are the runtime's reverse
// connections. It waits for the first connection to learn the pid, then
// serves the port in the background: that runtime's later connections are
// kept for the client's next commands, and every other runtime (a child
// process inherits DOTNET_DiagnosticPorts and would wait, suspended,
// forever) is resumed at once.
func (p *ReversePort) Client() (*Client, error) {
	conn, adv, err := p.Accept()
	if err != nil {
		return nil, err
	}
	own := make(chan net.Conn, 1)
	own <- conn
	go p.serve(adv.Pid, own)
	c := &Client{Pid: int(adv.Pid), Socket: p.Path}
	c.dial = func() (net.Conn, error) {
		select {
		case cn := <-own:
			return cn, nil
		case <-time.After(p.AcceptTimeout):
			return nil, fmt.Errorf("the runtime did not connect to %s within %v", p.Path, p.AcceptTimeout)
		}
	}
	return c, nil
}

// serve accepts until the port closes: connections of pid go to own (the
// newest replaces an unused older one), others get ResumeRuntime.
func (p *ReversePort) serve(pid uint64, own chan net.Conn) {
	p.ln.SetDeadline(time.Time{})
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go func() {
			c.SetReadDeadline(time.Now().Add(replyTimeout))
			var b [advertiseSize]byte
			if _, err := io.ReadFull(c, b[:]); err != nil {
				c.Close()
				return
			}
			c.SetReadDeadline(time.Time{})
			a, err := ParseAdvertise(b[:])
			if err != nil {
				c.Close()
				return
			}
			if a.Pid != pid {
				other := &Client{Pid: int(a.Pid), dial: func() (net.Conn, error) { return c, nil }}
				other.ResumeRuntime()
				return
			}
			for {
				select {
				case own <- c:
					return
				default:
				}
				select {
				case old := <-own:
					old.Close()
				default:
				}
			}
		}()
	}
}

// Close stops listening and removes the socket.
func (p *ReversePort) Close() error {
	err := p.ln.Close()
	os.RemoveAll(p.dir)
	return err
}
