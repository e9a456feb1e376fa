package nettrace

import (
	"encoding/binary"
	"strings"
	"testing"
)

// FuzzMetadataPayload feeds a V4/V5 metadata record (id, provider, event
// blob, V5 tags) and a payload to the record parser and the self-describing
// payload decoder: no panic, one-line errors, and a record that parses
// encodes again to the same event description. Seeds (testdata/fuzz) are
// every field-bearing metadata record of the real traces with one real
// payload of its event.
func FuzzMetadataPayload(f *testing.F) {
	f.Add(append(binary.LittleEndian.AppendUint32(nil, 1), appendUTF16Z(nil, "P")...), []byte{}, true)
	f.Fuzz(func(t *testing.T, record, payload []byte, ptr8 bool) {
		var v5 bool
		m, err := parseMetadataRecord(record, &v5)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		ptr := 4
		if ptr8 {
			ptr = 8
		}
		if _, err := DecodePayload(m, payload, ptr); err != nil && strings.Contains(err.Error(), "\n") {
			t.Fatalf("multi-line payload error %q", err)
		}
		body, err := encodeMetadataV4(m)
		if err != nil {
			return // a description V4 cannot carry (the writer refuses it)
		}
		m2, err := parseMetadataRecord(append(binary.LittleEndian.AppendUint32(nil, m.ID), body...), nil)
		if err != nil {
			t.Fatalf("re-encoded record does not parse: %v", err)
		}
		if m2.Provider != m.Provider || m2.EventID != m.EventID || m2.EventName != m.EventName || m2.Keywords != m.Keywords ||
			m2.Version != m.Version || m2.Level != m.Level || m2.Opcode != m.Opcode || fieldsString(m2.Fields) != fieldsString(m.Fields) {
			t.Fatalf("round trip changed %+v into %+v", m, m2)
		}
	})
}
