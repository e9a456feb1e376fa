//go:build compat

package nettrace

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/internal/fuzzcorpus"
	"github.com/clrspy/clrspy/internal/tracetest"
)

// seedTraces lists the real traces the seeds come from, sorted.
func seedTraces(t testing.TB) []string {
	var files []string
	dir := tracetest.CompatDir(t)
	for _, g := range []string{"*.nettrace", "*.netperf", "fragments/*.nettrace", "unsupported/*"} {
		m, _ := filepath.Glob(filepath.Join(dir, g))
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Fatalf("no real traces in %s", dir)
	}
	sort.Strings(files)
	return files
}

func traceLabel(path string) string {
	b := filepath.Base(path)
	return strings.TrimSuffix(b, filepath.Ext(b))
}

// firstEvents re-writes the first n events of a real trace (with their
// metadata and stacks) as a complete stream in the given format; nil when
// the trace cannot be read.
func firstEvents(t testing.TB, data []byte, n int, opt WriterOptions) []byte {
	rd, err := NewReader(bytes.NewReader(data))
	if err != nil {
		return nil
	}
	var buf bytes.Buffer
	w, err := NewWriter(&buf, *rd.Header(), opt)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		ev, err := rd.Next()
		if err != nil {
			break
		}
		// Small seeds fuzz faster: payloads are opaque to the reader and
		// a few frames show the stack blocks.
		c := *ev
		c.Payload = c.Payload[:min(len(c.Payload), 128)]
		c.Stack = c.Stack[:min(len(c.Stack), 6)]
		if err := w.WriteEvent(&c); err != nil {
			return nil // an event this format cannot carry
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestFuzzCorpus keeps the checked-in seeds of the reader's fuzz targets in
// step with the real traces: the first 4 KB of each, each one's first 48
// events (payloads cut to 128 bytes, stacks to 6 frames) re-written as a complete V4 and V6 stream, and each metadata record
// (V4 and V6 encodings) with one real payload of its event.
func TestFuzzCorpus(t *testing.T) {
	var reader, v6, rows, records []fuzzcorpus.Seed
	seenRow := map[string]bool{}
	seenRec := map[string]bool{}
	for _, path := range seedTraces(t) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		label := traceLabel(path)
		reader = append(reader, fuzzcorpus.Seed{Label: label + "-head4k", Args: []any{fuzzcorpus.Cap(data, 4<<10)}})
		if b := firstEvents(t, data, 48, WriterOptions{BlockSize: 1024}); b != nil {
			reader = append(reader, fuzzcorpus.Seed{Label: label + "-first48", Args: []any{b}})
		}
		if b := firstEvents(t, data, 48, WriterOptions{Format: FormatNetTraceV6, BlockSize: 1024}); b != nil {
			v6 = append(v6, fuzzcorpus.Seed{Label: label + "-first48", Args: []any{b}})
		}
		// One payload per metadata record: the first event that uses it.
		rd, err := NewReader(bytes.NewReader(data))
		if err != nil {
			continue
		}
		payload := map[*Metadata][]byte{}
		for {
			ev, err := rd.Next()
			if err != nil {
				break
			}
			if _, ok := payload[ev.Meta]; !ok {
				payload[ev.Meta] = fuzzcorpus.Cap(ev.Payload, 1<<10)
			}
		}
		ptr8 := rd.Header().PointerSize == 8
		for _, m := range rd.Metadata() {
			if body, err := encodeMetadataV6(m); err == nil {
				row := append(binary.AppendUvarint(nil, uint64(m.ID)), body...)
				if k := string(row[len(binary.AppendUvarint(nil, uint64(m.ID))):]); !seenRow[k] {
					seenRow[k] = true
					rows = append(rows, fuzzcorpus.Seed{Label: label + "-" + m.Name, Args: []any{row}})
				}
			}
			if !m.HasFields {
				continue // runtime events: package clrevents decodes them
			}
			body, err := encodeMetadataV4(m)
			if err != nil {
				continue
			}
			rec := append(binary.LittleEndian.AppendUint32(nil, m.ID), body...)
			if k := string(body); !seenRec[k] {
				seenRec[k] = true
				p := payload[m]
				if p == nil {
					p = []byte{}
				}
				records = append(records, fuzzcorpus.Seed{Label: label + "-" + m.Name, Args: []any{rec, p, ptr8}})
			}
		}
	}
	fuzzcorpus.Check(t, "FuzzReader", reader)
	fuzzcorpus.Check(t, "FuzzV6Reader", v6)
	fuzzcorpus.Check(t, "FuzzV6MetadataRow", rows)
	fuzzcorpus.Check(t, "FuzzMetadataPayload", records)
}
