package ipc

import (
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// Client sends diagnostics commands to one runtime. The protocol allows one
// command per connection, so every call opens its own: a connect to the
// runtime's listening socket, or, for a runtime started with a reverse
// port, the next connection the runtime makes to clrspy.
type Client struct {
	Pid    int
	Socket string
	// Notice is Endpoint.Notice for a client made by Dial: one line for
	// the user when root attaches to another user's process.
	Notice string
	dial   func() (net.Conn, error)
	// timeout bounds the wait for a reply (0: replyTimeout); ps asks
	// with a short one so one mute process cannot stall it.
	timeout time.Duration
}

// NewClient makes a Client over any connection factory (tests use pipes).
func NewClient(pid int, dial func() (net.Conn, error)) *Client {
	return &Client{Pid: pid, dial: dial}
}

// replyTimeout bounds the wait for a command's reply (not for the stream
// that follows CollectTracing).
const replyTimeout = 30 * time.Second

// do sends one request and returns the open connection and the reply
// payload; the caller closes the connection.
func (c *Client) do(set, id byte, payload []byte, what string) (net.Conn, []byte, error) {
	msg, err := message(set, id, payload)
	if err != nil {
		return nil, nil, err
	}
	conn, err := c.dial()
	if err != nil {
		return nil, nil, err
	}
	wait := replyTimeout
	if c.timeout > 0 {
		wait = c.timeout
	}
	conn.SetDeadline(time.Now().Add(wait))
	if _, err := conn.Write(msg); err != nil {
		conn.Close()
		return nil, nil, fmt.Errorf("%s: sending the request: %w", what, err)
	}
	reply, err := readResponse(conn, what)
	if err != nil {
		conn.Close()
		return nil, nil, err
	}
	conn.SetDeadline(time.Time{})
	return conn, reply, nil
}

// ProcessInfo is what the runtime says about its process.
type ProcessInfo struct {
	Pid            uint64 // inside the target's pid namespace
	RuntimeCookie  [16]byte
	CommandLine    string
	OS             string
	Arch           string
	Entrypoint     string // managed entry assembly (ProcessInfo2+)
	RuntimeVersion string // e.g. "10.0.12" (ProcessInfo2+)
	RID            string // e.g. "linux-x64" (ProcessInfo3)
	Command        int    // 1, 2 or 3: which ProcessInfo answered
}

// ProcessInfo asks ProcessInfo3, falling back to 2 and 1 on runtimes that
// do not know the newer commands.
func (c *Client) ProcessInfo() (*ProcessInfo, error) {
	for _, v := range []struct {
		id  byte
		n   int
		cmd string
	}{{cmdProcessInfo3, 3, "ProcessInfo3"}, {cmdProcessInfo2, 2, "ProcessInfo2"}, {cmdProcessInfo, 1, "ProcessInfo"}} {
		conn, reply, err := c.do(setProcess, v.id, nil, v.cmd)
		if IsUnknownCommand(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		conn.Close()
		info, err := parseProcessInfo(reply, v.n)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", v.cmd, err)
		}
		return info, nil
	}
	return nil, fmt.Errorf("the runtime knows no ProcessInfo command")
}

func parseProcessInfo(b []byte, version int) (*ProcessInfo, error) {
	d := &dec{b: b}
	info := &ProcessInfo{Command: version}
	var v3 uint32
	if version == 3 {
		v3 = d.u32()
	}
	info.Pid = d.u64()
	copy(info.RuntimeCookie[:], d.bytes(16))
	info.CommandLine = d.str()
	info.OS = d.str()
	info.Arch = d.str()
	if version >= 2 {
		info.Entrypoint = d.str()
		info.RuntimeVersion = d.str()
	}
	if version == 3 && v3 >= 1 {
		info.RID = d.str()
	}
	return info, d.err
}

// ResumeRuntime lets a runtime suspended at startup (a suspending
// diagnostic port) go on; a no-op for a running one.
func (c *Client) ResumeRuntime() error {
	conn, reply, err := c.do(setProcess, cmdResumeRuntime, nil, "ResumeRuntime")
	if err != nil {
		return err
	}
	conn.Close()
	// Current runtimes answer OK with an HRESULT payload.
	if len(reply) >= 4 {
		if hr := (&dec{b: reply}).u32(); hr != 0 {
			return &ServerError{Command: "ResumeRuntime", HResult: hr}
		}
	}
	return nil
}

// stopTracing ends session id, on a new connection as the protocol wants.
func (c *Client) stopTracing(id uint64) error {
	e := &enc{}
	e.u64(id)
	conn, _, err := c.do(setEventPipe, cmdStopTracing, e.b, "StopTracing")
	if err != nil {
		return err
	}
	conn.Close()
	return nil
}

// DefaultRundownKeyword is the rundown the runtime does by default at the
// end of a session: method, module and loader names so every code address
// seen in the session can be named.
const DefaultRundownKeyword uint64 = 0x80020139

// SessionConfig describes an EventPipe session.
type SessionConfig struct {
	Providers []Provider
	// BufferMB is the runtime-side circular buffer (default 256).
	BufferMB uint32
	// NoRundown turns the stop-time rundown off; RundownKeyword overrides
	// its keywords (needs CollectTracing4, .NET 9+).
	NoRundown      bool
	RundownKeyword uint64
	// NoStackwalk asks for events without stacks (CollectTracing3+).
	NoStackwalk bool
	// Command forces the first CollectTracing version tried (2–5); 0 picks
	// the oldest that expresses the configuration. Unknown-command replies
	// fall back to older versions that can still express it.
	Command int
}

// Session is a running EventPipe session: Read yields its nettrace byte
// stream until the runtime closes it (after Stop, or when the process
// exits).
type Session struct {
	ID uint64
	// Command is the CollectTracing version the runtime accepted.
	Command int

	client   *Client
	conn     net.Conn
	stopOnce sync.Once
	stopErr  error
	closed   bool
	mu       sync.Mutex
	read     int64
	// After StopTracing's reply: stopped, the bytes read by then, and
	// cut once the drain's bound passed.
	stopped  bool
	stopRead int64
	cut      bool
}

// The drain after StopTracing is bounded: the runtime answers once the
// rundown is written, so what is left is what the socket holds; a runtime
// that keeps streaming is cut DrainAfterStop after its reply, or after
// DrainBytes more bytes, and the stream ends there (a cut stream).
var (
	DrainAfterStop       = 30 * time.Second
	DrainBytes     int64 = 256 << 20
)

// StartSession opens a session.
func (c *Client) StartSession(cfg SessionConfig) (*Session, error) {
	if len(cfg.Providers) == 0 {
		return nil, fmt.Errorf("a session needs at least one provider")
	}
	if cfg.BufferMB == 0 {
		cfg.BufferMB = 256
	}
	need := 2
	if cfg.NoStackwalk {
		need = 3
	}
	if cfg.RundownKeyword != 0 && cfg.RundownKeyword != DefaultRundownKeyword && !cfg.NoRundown {
		need = 4
	}
	first := cfg.Command
	if first == 0 {
		first = need
	}
	if first < 1 || first > 5 {
		return nil, fmt.Errorf("CollectTracing%d does not exist (want 1..5)", first)
	}
	var lastErr error
	for v := first; v >= 1; v-- {
		if v < need {
			break
		}
		payload := collectPayload(v, cfg)
		name := "CollectTracing"
		if v > 1 {
			name = fmt.Sprintf("CollectTracing%d", v)
		}
		conn, reply, err := c.do(setEventPipe, byte(cmdCollectTracing+v-1), payload, name)
		if IsUnknownCommand(err) {
			lastErr = err
			continue
		}
		if err != nil {
			return nil, err
		}
		d := &dec{b: reply}
		id := d.u64()
		if d.err != nil {
			conn.Close()
			return nil, fmt.Errorf("%s: reply without a session id", name)
		}
		return &Session{ID: id, Command: v, client: c, conn: conn}, nil
	}
	if lastErr != nil {
		return nil, fmt.Errorf("this runtime cannot run the session: %v", lastErr)
	}
	return nil, fmt.Errorf("this runtime cannot run the session (needs CollectTracing%d)", need)
}

// collectPayload encodes CollectTracing version v for cfg.
func collectPayload(v int, cfg SessionConfig) []byte {
	e := &enc{}
	rundownKw := DefaultRundownKeyword
	if cfg.RundownKeyword != 0 {
		rundownKw = cfg.RundownKeyword
	}
	if cfg.NoRundown {
		rundownKw = 0
	}
	if v == 5 {
		e.u32(0) // session type: streaming over IPC
	}
	e.u32(cfg.BufferMB)
	e.u32(1) // format: NetTrace
	switch v {
	case 2:
		e.bool(!cfg.NoRundown)
	case 3:
		e.bool(!cfg.NoRundown)
		e.bool(!cfg.NoStackwalk)
	case 4, 5:
		e.u64(rundownKw)
		e.bool(!cfg.NoStackwalk)
	}
	e.u32(uint32(len(cfg.Providers)))
	for _, p := range cfg.Providers {
		e.u64(p.Keywords)
		e.u32(uint32(p.Level))
		e.str(p.Name)
		e.str(p.Args)
		if v == 5 {
			// Event filter: "disable these ids", none listed.
			e.bool(false)
			e.u32(0)
		}
	}
	return e.b
}

// Read reads the session's nettrace stream.
func (s *Session) Read(p []byte) (int, error) {
	n, err := s.conn.Read(p)
	s.mu.Lock()
	s.read += int64(n)
	closed := s.closed
	over := s.stopped && !s.cut && s.read-s.stopRead > DrainBytes
	s.mu.Unlock()
	if over {
		s.cutStream()
	}
	if err != nil && closed {
		err = io.EOF
	}
	if err != nil && err != io.EOF {
		// A reset when the target exits is the end of the stream.
		err = io.EOF
	}
	return n, err
}

// BytesRead is how many stream bytes Read has returned so far.
func (s *Session) BytesRead() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.read
}

// Stop asks the runtime to end the session. The runtime then performs the
// rundown, writes the end of the stream and closes it: keep reading until
// EOF. The runtime answers StopTracing only once the rundown is written, so
// the stream must be read concurrently (call Stop from another goroutine).
// Stop is idempotent; stopping a session whose process has exited is not
// an error.
func (s *Session) Stop() error {
	s.stopOnce.Do(func() {
		err := s.client.stopTracing(s.ID)
		if err != nil {
			var ae *AttachError
			if asAttach(err, &ae) {
				// The process is gone: its stream has ended anyway.
				err = nil
			}
		}
		s.stopErr = err
		s.mu.Lock()
		s.stopped, s.stopRead = true, s.read
		s.mu.Unlock()
		time.AfterFunc(DrainAfterStop, s.cutStream)
	})
	return s.stopErr
}

// cutStream ends a stream the runtime goes on with after StopTracing.
func (s *Session) cutStream() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.cut, s.closed = true, true
	s.mu.Unlock()
	s.conn.Close()
}

// Cut reports whether the stream was cut because the runtime went on
// streaming past the drain's bound after StopTracing.
func (s *Session) Cut() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cut
}

// Close drops the connection. Without Stop first the runtime ends the
// session without a rundown.
func (s *Session) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	return s.conn.Close()
}

func asAttach(err error, target **AttachError) bool {
	ae, ok := err.(*AttachError)
	if ok {
		*target = ae
	}
	return ok
}
