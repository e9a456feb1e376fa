package nettrace

import (
	"errors"
	"fmt"
	"math"
)

// Cursor is a bounds-checked little-endian reader over a byte slice:
// after the first failure every read returns zero and Err stays set, so a
// decoder reads a whole layout and checks once. It is the one reader of
// clrspy's binary layouts: nettrace's metadata and self-describing
// payloads, clrevents' runtime payloads.
type Cursor struct {
	b      []byte
	p      int
	err    error
	budget int // values DecodePayload may still produce
}

// NewCursor reads b from its start.
func NewCursor(b []byte) Cursor { return Cursor{b: b} }

var errShort = errors.New("data ends early")

// OK reports whether every read so far fitted.
func (c *Cursor) OK() bool { return c.err == nil }

// Err is the first failure (nil: none).
func (c *Cursor) Err() error { return c.err }

// Need reports whether n more bytes are there; if not, the cursor fails.
func (c *Cursor) Need(n int) bool {
	if c.err != nil {
		return false
	}
	if n < 0 || len(c.b)-c.p < n {
		c.err = errShort
		return false
	}
	return true
}

// Rest is the number of unread bytes.
func (c *Cursor) Rest() int { return len(c.b) - c.p }

// Pos is the number of bytes read.
func (c *Cursor) Pos() int { return c.p }

// take returns the next n bytes, or nil (and the cursor fails) when
// fewer are left.
func (c *Cursor) take(n int) []byte {
	if !c.Need(n) {
		return nil
	}
	c.p += n
	return c.b[c.p-n : c.p]
}

func (c *Cursor) U8() uint8 {
	if b := c.take(1); b != nil {
		return b[0]
	}
	return 0
}

func (c *Cursor) U16() uint16 {
	if b := c.take(2); b != nil {
		return le16(b)
	}
	return 0
}

func (c *Cursor) U32() uint32 {
	if b := c.take(4); b != nil {
		return le32(b)
	}
	return 0
}

func (c *Cursor) U64() uint64 {
	if b := c.take(8); b != nil {
		return le64(b)
	}
	return 0
}

// Ptr reads a pointer of size bytes (4, else 8).
func (c *Cursor) Ptr(size int) uint64 {
	if size == 4 {
		return uint64(c.U32())
	}
	return c.U64()
}

func (c *Cursor) F64() float64 { return math.Float64frombits(c.U64()) }

func (c *Cursor) GUID() GUID {
	var g GUID
	copy(g[:], c.take(16))
	return g
}

// Bytes returns the next n bytes (not a copy).
func (c *Cursor) Bytes(n int) []byte { return c.take(n) }

// Uvarint reads an unsigned LEB128 value.
func (c *Cursor) Uvarint() uint64 {
	if c.err != nil {
		return 0
	}
	v, p := uvar(c.b, c.p)
	if p > len(c.b) {
		c.err = errShort
		return 0
	}
	c.p = p
	return v
}

// UTF16Z reads a NUL-terminated UTF-16LE string.
func (c *Cursor) UTF16Z() string {
	b := c.RawUTF16Z()
	if b == nil {
		return ""
	}
	return decodeUTF16(b[:len(b)-2])
}

// RawUTF16Z returns a NUL-terminated UTF-16LE string's bytes, the NUL
// included, without converting them (DecodeUTF16Z converts them).
func (c *Cursor) RawUTF16Z() []byte {
	if c.err != nil {
		return nil
	}
	for i := c.p; i+1 < len(c.b); i += 2 {
		if c.b[i] == 0 && c.b[i+1] == 0 {
			s := c.b[c.p : i+2]
			c.p = i + 2
			return s
		}
	}
	c.err = errors.New("string has no terminating NUL")
	return nil
}

// UTF8 reads a V6 string: varuint32 byte length, then UTF-8 bytes.
func (c *Cursor) UTF8() string {
	n := c.Uvarint()
	if c.err != nil {
		return ""
	}
	if n > uint64(c.Rest()) {
		c.err = fmt.Errorf("string of %d bytes overruns its data", n)
		return ""
	}
	return string(c.Bytes(int(n)))
}
