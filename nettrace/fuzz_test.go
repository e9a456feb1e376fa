package nettrace

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"

	"github.com/clrspy/clrspy/internal/tracetest"
)

// FuzzReader feeds arbitrary bytes to the reader: it must never panic or
// hang, and it must end with io.EOF, a TruncatedError, a FormatError or an
// UnsupportedVersionError. The seeds are the fixture traces (cut to their
// first 4 KB, so mutations reach every block kind quickly).
func FuzzReader(f *testing.F) {
	for _, name := range tracetest.Fixtures(f) {
		b, err := os.ReadFile(tracetest.Path(f, name))
		if err != nil {
			f.Fatal(err)
		}
		if len(b) > 4<<10 {
			b = b[:4<<10]
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewReader(bytes.NewReader(data))
		if err != nil {
			checkEndError(t, err)
			return
		}
		// Each event consumes at least one byte of input, so a reader that
		// delivers more events than bytes is looping.
		limit := len(data) + 16
		for i := 0; ; i++ {
			ev, err := r.Next()
			if err != nil {
				if err != io.EOF {
					checkEndError(t, err)
				}
				break
			}
			if i > limit {
				t.Fatalf("more than %d events from %d bytes", limit, len(data))
			}
			if ev.Meta == nil {
				t.Fatal("event without metadata")
			}
			if ev.Meta.HasFields {
				_, _ = DecodePayload(ev.Meta, ev.Payload, r.Header().PointerSize)
			}
		}
		// After the end, Next keeps returning the same error.
		if _, err := r.Next(); err == nil {
			t.Fatal("Next succeeded after the end")
		}
	})
}

func checkEndError(t *testing.T, err error) {
	t.Helper()
	var fe *FormatError
	var uv *UnsupportedVersionError
	if errors.Is(err, ErrTruncated) || errors.As(err, &fe) || errors.As(err, &uv) {
		return
	}
	t.Fatalf("unexpected error type %T: %v", err, err)
}
