package nettrace

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/internal/tracetest"
)

// FuzzV6Reader feeds mutated V6 streams to the reader: it must end every
// stream with io.EOF or a one-line typed error, never panic or loop.
// Seeds: a writer-made V6 copy of the small cut fixture, synthetic streams
// (compressed and not) and the hand-built stream with every V6 block kind.
func FuzzV6Reader(f *testing.F) {
	for _, name := range []string{"gc-wks.truncated.nettrace"} {
		data, err := os.ReadFile(tracetest.Path(f, name))
		if err != nil {
			f.Fatal(err)
		}
		_, _, outs := copyTrace(f, bytes.NewReader(data), WriterOptions{Format: FormatNetTraceV6, BlockSize: 512})
		f.Add(outs[0])
	}
	evs := random(12, 3, 5)
	f.Add(writeAll(f, evs, WriterOptions{Format: FormatNetTraceV6, BlockSize: 200, SequencePointEvery: 400}))
	f.Add(writeAll(f, evs, WriterOptions{Format: FormatNetTraceV6, Uncompressed: true, BlockSize: 300}))
	f.Add(v6FeatureStream())
	f.Fuzz(func(t *testing.T, data []byte) {
		rd, err := NewReader(bytes.NewReader(data))
		if err != nil {
			checkReadError(t, err)
			return
		}
		for i := 0; i <= len(data); i++ {
			ev, err := rd.Next()
			if err != nil {
				checkReadError(t, err)
				return
			}
			_ = ev.Meta.Name
			_ = len(ev.Stack) + len(ev.Payload)
		}
		t.Fatalf("more events than input bytes (%d)", len(data))
	})
}

func checkReadError(t *testing.T, err error) {
	var (
		te *TruncatedError
		fe *FormatError
		ue *UnsupportedVersionError
	)
	if err != io.EOF && !errors.As(err, &te) && !errors.As(err, &fe) && !errors.As(err, &ue) {
		t.Fatalf("untyped error %T: %v", err, err)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Fatalf("multi-line error %q", err)
	}
}

// FuzzV6MetadataRow feeds mutated V6 metadata rows to the row parser,
// seeded with the rows of every metadata record of two fixture traces
// re-encoded for V6.
func FuzzV6MetadataRow(f *testing.F) {
	for _, name := range []string{"contention.nettrace", "gc-induced.nettrace"} {
		data, err := os.ReadFile(tracetest.Path(f, name))
		if err != nil {
			f.Fatal(err)
		}
		rd, err := NewReader(bytes.NewReader(data))
		if err != nil {
			f.Fatal(err)
		}
		for {
			if _, err := rd.Next(); err != nil {
				break
			}
		}
		for _, m := range rd.Metadata() {
			body, err := encodeMetadataV6(m)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(append(binary.AppendUvarint(nil, uint64(m.ID)), body...))
		}
	}
	f.Fuzz(func(t *testing.T, row []byte) {
		m, err := parseMetadataRowV6(row)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		// What parses must encode again to the same metadata.
		body, err := encodeMetadataV6(m)
		if err != nil {
			return // e.g. a name or field list too long to re-encode
		}
		m2, err := parseMetadataRowV6(append(binary.AppendUvarint(nil, uint64(m.ID)), body...))
		if err != nil {
			t.Fatalf("re-encoded row does not parse: %v", err)
		}
		if fmt.Sprint(m2.Provider, m2.EventID, m2.EventName, m2.Keywords, m2.Level, m2.Version, m2.Opcode, fieldsString(m2.Fields)) !=
			fmt.Sprint(m.Provider, m.EventID, m.EventName, m.Keywords, m.Level, m.Version, m.Opcode, fieldsString(m.Fields)) {
			t.Fatalf("round trip changed %+v into %+v", m, m2)
		}
	})
}
