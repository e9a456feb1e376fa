package ipc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf16"
)

// Command sets and ids of the diagnostics IPC protocol.
const (
	setEventPipe = 0x02
	setProcess   = 0x04
	setServer    = 0xFF

	cmdStopTracing     = 0x01
	cmdCollectTracing  = 0x02
	cmdCollectTracing2 = 0x03
	cmdCollectTracing3 = 0x04
	cmdCollectTracing4 = 0x05
	cmdCollectTracing5 = 0x06

	cmdProcessInfo   = 0x00
	cmdResumeRuntime = 0x01
	cmdProcessInfo2  = 0x04
	cmdProcessInfo3  = 0x08

	respOK    = 0x00
	respError = 0xFF
)

const headerSize = 20

var magic = [14]byte{'D', 'O', 'T', 'N', 'E', 'T', '_', 'I', 'P', 'C', '_', 'V', '1', 0}

// HRESULTs the diagnostics server answers with.
const (
	HRBadEncoding          uint32 = 0x80131384
	HRUnknownCommand       uint32 = 0x80131385
	HRUnknownMagic         uint32 = 0x80131386
	HRNotSupported         uint32 = 0x80131515
	HRFail                 uint32 = 0x80004005
	HRNotYetAvailable      uint32 = 0x8013135B
	HRRuntimeUninitialized uint32 = 0x80131371
	HRInvalidArg           uint32 = 0x80070057
	HRInsufficientBuffer   uint32 = 0x8007007A
	HREnvVarNotFound       uint32 = 0x800000CB
)

var hresultNames = map[uint32]string{
	HRBadEncoding:          "DS_IPC_E_BAD_ENCODING",
	HRUnknownCommand:       "DS_IPC_E_UNKNOWN_COMMAND",
	HRUnknownMagic:         "DS_IPC_E_UNKNOWN_MAGIC",
	HRNotSupported:         "DS_IPC_E_NOTSUPPORTED",
	HRFail:                 "DS_IPC_E_FAIL",
	HRNotYetAvailable:      "DS_IPC_E_NOT_YET_AVAILABLE",
	HRRuntimeUninitialized: "DS_IPC_E_RUNTIME_UNINITIALIZED",
	HRInvalidArg:           "DS_IPC_E_INVALIDARG",
	HRInsufficientBuffer:   "DS_IPC_E_INSUFFICIENT_BUFFER",
	HREnvVarNotFound:       "DS_IPC_E_ENVVAR_NOT_FOUND",
}

// HResultName names a diagnostics HRESULT, or formats it in hex.
func HResultName(hr uint32) string {
	if n, ok := hresultNames[hr]; ok {
		return n
	}
	return fmt.Sprintf("HRESULT 0x%08X", hr)
}

// ServerError is an error reply of the diagnostics server.
type ServerError struct {
	Command string // the request, e.g. "CollectTracing5"
	HResult uint32
	// Message is the text some errors carry after the HRESULT
	// (GenerateCoreDump3: createdump's own message).
	Message string
}

func (e *ServerError) Error() string {
	s := fmt.Sprintf("the runtime refused %s: %s (0x%08X)", e.Command, HResultName(e.HResult), e.HResult)
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// IsUnknownCommand reports whether err is the reply of a runtime too old to
// know the command.
func IsUnknownCommand(err error) bool {
	var se *ServerError
	return errors.As(err, &se) && se.HResult == HRUnknownCommand
}

// oneLine joins a multi-line text (createdump's log) into one line.
func oneLine(s string) string {
	var parts []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, "; ")
}

// message builds an IPC message: header then payload.
func message(set, id byte, payload []byte) ([]byte, error) {
	n := headerSize + len(payload)
	if n > 0xFFFF {
		return nil, fmt.Errorf("diagnostics request of %d bytes exceeds the protocol's 65535-byte limit (too many providers or arguments)", n)
	}
	b := make([]byte, headerSize, n)
	copy(b, magic[:])
	binary.LittleEndian.PutUint16(b[14:], uint16(n))
	b[16], b[17] = set, id
	return append(b, payload...), nil
}

// readResponse reads one reply header and its payload. An error reply
// becomes a *ServerError naming what.
func readResponse(r io.Reader, what string) ([]byte, error) {
	var h [headerSize]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil, fmt.Errorf("%s: the runtime closed the connection without answering", what)
		}
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if [14]byte(h[:14]) != magic {
		return nil, fmt.Errorf("%s: reply does not start with the DOTNET_IPC_V1 magic", what)
	}
	size := int(binary.LittleEndian.Uint16(h[14:]))
	if size < headerSize {
		return nil, fmt.Errorf("%s: reply size %d is below the header size", what, size)
	}
	payload := make([]byte, size-headerSize)
	if _, err := io.ReadFull(r, payload); err != nil {
		return nil, fmt.Errorf("%s: truncated reply: %w", what, err)
	}
	if h[16] != setServer {
		return nil, fmt.Errorf("%s: reply has command set 0x%02X, want 0xFF", what, h[16])
	}
	switch h[17] {
	case respOK:
		return payload, nil
	case respError:
		if len(payload) < 4 {
			return nil, fmt.Errorf("%s: error reply without an HRESULT", what)
		}
		se := &ServerError{Command: what, HResult: binary.LittleEndian.Uint32(payload)}
		if len(payload) > 4 {
			// A message may follow (GenerateCoreDump3); a malformed one is
			// dropped, the HRESULT still says what failed.
			d := &dec{b: payload[4:]}
			if m := d.str(); d.err == nil {
				se.Message = oneLine(m)
			}
		}
		return nil, se
	}
	return nil, fmt.Errorf("%s: unknown reply id 0x%02X", what, h[17])
}

// enc appends IPC primitives.
type enc struct{ b []byte }

func (e *enc) u8(v byte)    { e.b = append(e.b, v) }
func (e *enc) u32(v uint32) { e.b = binary.LittleEndian.AppendUint32(e.b, v) }
func (e *enc) u64(v uint64) { e.b = binary.LittleEndian.AppendUint64(e.b, v) }
func (e *enc) bool(v bool) {
	if v {
		e.u8(1)
	} else {
		e.u8(0)
	}
}

// str writes a length-prefixed NUL-terminated UTF-16 string; "" is the
// absent string (length 0).
func (e *enc) str(s string) {
	if s == "" {
		e.u32(0)
		return
	}
	u := utf16.Encode([]rune(s))
	e.u32(uint32(len(u) + 1))
	for _, c := range u {
		e.b = binary.LittleEndian.AppendUint16(e.b, c)
	}
	e.b = append(e.b, 0, 0)
}

// dec reads IPC primitives from a reply; the first failure sticks.
type dec struct {
	b   []byte
	err error
}

func (d *dec) fail() {
	if d.err == nil {
		d.err = errors.New("reply payload too short")
	}
}

func (d *dec) u32() uint32 {
	if d.err != nil || len(d.b) < 4 {
		d.fail()
		return 0
	}
	v := binary.LittleEndian.Uint32(d.b)
	d.b = d.b[4:]
	return v
}

func (d *dec) u64() uint64 {
	if d.err != nil || len(d.b) < 8 {
		d.fail()
		return 0
	}
	v := binary.LittleEndian.Uint64(d.b)
	d.b = d.b[8:]
	return v
}

func (d *dec) bytes(n int) []byte {
	if d.err != nil || n < 0 || len(d.b) < n {
		d.fail()
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *dec) str() string {
	n := d.u32()
	if d.err != nil || n == 0 {
		return ""
	}
	if uint64(n)*2 > uint64(len(d.b)) {
		d.fail()
		return ""
	}
	raw := d.bytes(int(n) * 2)
	u := make([]uint16, 0, n)
	for i := 0; i+1 < len(raw); i += 2 {
		c := binary.LittleEndian.Uint16(raw[i:])
		if c == 0 {
			break
		}
		u = append(u, c)
	}
	return string(utf16.Decode(u))
}
