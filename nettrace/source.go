package nettrace

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

// ErrTruncated is matched (errors.Is) by the error a Reader returns when the
// stream ends before its end-of-stream marker.
var ErrTruncated = errors.New("trace truncated")

// TruncatedError reports a stream cut before its end marker. Every complete
// event before Offset has been delivered.
type TruncatedError struct {
	Offset int64  // stream offset of the incomplete object or block
	What   string // what was being read
}

func (e *TruncatedError) Error() string {
	return fmt.Sprintf("trace truncated at offset %d (inside %s): events up to the cut were read", e.Offset, e.What)
}

// Is makes errors.Is(err, ErrTruncated) true.
func (e *TruncatedError) Is(target error) bool { return target == ErrTruncated }

// FormatError reports bytes that do not follow the format.
type FormatError struct {
	Offset int64
	Msg    string
	// NotTrace: the input does not start like any trace (a text file, a
	// file of another format), rather than a trace corrupt at Offset.
	NotTrace bool
}

func (e *FormatError) Error() string {
	if e.NotTrace {
		return "not a trace: " + e.Msg
	}
	return fmt.Sprintf("corrupt trace at offset %d: %s", e.Offset, e.Msg)
}

// UnsupportedVersionError reports a recognised but unsupported format.
type UnsupportedVersionError struct {
	Found string
}

func (e *UnsupportedVersionError) Error() string {
	return fmt.Sprintf("unsupported trace format %s: clrspy reads NetPerf V3 and NetTrace V4, V5 and V6", e.Found)
}

// maxBlockSize bounds any single block or object body. Runtime blocks are
// about 100 KB and V6 blocks cannot exceed 16 MB; the bound only keeps a
// corrupt size field from being trusted.
const maxBlockSize = 1 << 28

// source is a buffered byte stream that counts its offset.
type source struct {
	br  *bufio.Reader
	off int64
	// tmp takes the small reads of every block (its size, its object
	// header): a local array would escape through bufio's reader and cost
	// an allocation each.
	tmp [16]byte
}

// The buffer serves the small reads (object headers, tags). It is smaller
// than a block, so that bufio hands block reads straight to the underlying
// reader: the bytes are copied once, into the block's buffer.
func newSource(r io.Reader) *source {
	return &source{br: bufio.NewReaderSize(r, 16<<10)}
}

// truncated wraps an EOF met while reading what.
func (s *source) truncated(start int64, what string) error {
	return &TruncatedError{Offset: start, What: what}
}

func (s *source) readByte() (byte, error) {
	b, err := s.br.ReadByte()
	if err != nil {
		return 0, err
	}
	s.off++
	return b, nil
}

// readFull reads exactly len(p) bytes; a short read returns io.ErrUnexpectedEOF
// (or io.EOF when nothing was read).
func (s *source) readFull(p []byte) error {
	n, err := io.ReadFull(s.br, p)
	s.off += int64(n)
	return err
}

func (s *source) skip(n int) error {
	d, err := s.br.Discard(n)
	s.off += int64(d)
	if err != nil && d < n {
		if err == io.EOF {
			return io.ErrUnexpectedEOF
		}
		return err
	}
	return nil
}

func (s *source) u32() (uint32, error) {
	b := s.tmp[:4]
	if err := s.readFull(b); err != nil {
		return 0, err
	}
	return le32(b), nil
}

// readBlock reads n bytes into buf, allocating once for the size the block
// header gave (callers bound it by maxBlockSize): a block costs its size
// once. A size the input does not back costs address space, not memory:
// the pages the read never reaches are never touched.
func (s *source) readBlock(buf []byte, n int) ([]byte, error) {
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	m, err := io.ReadFull(s.br, buf)
	s.off += int64(m)
	return buf[:m], err // a short read keeps only the bytes that exist
}

func le16(b []byte) uint16 { return uint16(b[0]) | uint16(b[1])<<8 }
func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}
func le64(b []byte) uint64 { return uint64(le32(b)) | uint64(le32(b[4:]))<<32 }

// isEOF reports whether err means the input ended.
func isEOF(err error) bool { return err == io.EOF || err == io.ErrUnexpectedEOF }
