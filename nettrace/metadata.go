package nettrace

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf16"
)

// decodeUTF16 converts UTF-16LE bytes; an ASCII fast path avoids the
// intermediate slice for the common case.
func decodeUTF16(b []byte) string {
	ascii := true
	for i := 0; i+1 < len(b); i += 2 {
		if b[i+1] != 0 || b[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		out := make([]byte, len(b)/2)
		for i := range out {
			out[i] = b[2*i]
		}
		return string(out)
	}
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = le16(b[2*i:])
	}
	return string(utf16.Decode(u))
}

// DecodeUTF16Z reads a NUL-terminated UTF-16LE string from b and returns it
// with the number of bytes consumed (including the terminator). ok is false
// when b holds no terminator.
func DecodeUTF16Z(b []byte) (s string, n int, ok bool) {
	c := Cursor{b: b}
	s = c.UTF16Z()
	return s, c.p, c.err == nil
}

// maxFieldDepth bounds nested struct descriptions (hostile metadata could
// otherwise recurse without end).
const maxFieldDepth = 16

// parseMetadataRecord decodes a V3/V4/V5 metadata record: id, provider and
// the event's metadata blob with optional V5 tags.
func parseMetadataRecord(b []byte, v5 *bool) (*Metadata, error) {
	c := &Cursor{b: b}
	m := &Metadata{}
	m.ID = c.U32()
	m.Provider = c.UTF16Z()
	if c.err != nil {
		return nil, fmt.Errorf("metadata record: %w", c.err)
	}
	if err := parseEventMetadataBlob(c, m, v5); err != nil {
		return nil, fmt.Errorf("metadata %d (%q): %w", m.ID, m.Provider, err)
	}
	return m, nil
}

// parseEventMetadataBlob decodes the blob a provider registers for an event:
// EventId, name, keywords, version, level, V1 fields, then V5 tags.
func parseEventMetadataBlob(c *Cursor, m *Metadata, v5 *bool) error {
	if c.Rest() == 0 {
		// Some writers emit an empty blob for events without metadata.
		return nil
	}
	m.EventID = c.U32()
	m.EventName = c.UTF16Z()
	m.Keywords = c.U64()
	m.Version = c.U32()
	m.Level = uint8(c.U32())
	if c.err != nil {
		return c.err
	}
	if c.Rest() >= 4 {
		n := c.U32()
		if int64(n) > int64(c.Rest()) {
			return fmt.Errorf("field count %d exceeds the record", n)
		}
		fields, err := parseV1Fields(c, int(n), 0)
		if err != nil {
			return err
		}
		m.Fields = fields
		m.HasFields = true
	}
	// V5 tags until the end of the record.
	for c.Rest() > 0 {
		size := c.U32()
		kind := c.U8()
		if c.err != nil {
			return fmt.Errorf("metadata tag: %w", c.err)
		}
		body := c.Bytes(int(size))
		if c.err != nil {
			return fmt.Errorf("metadata tag of %d bytes overruns the record", size)
		}
		if v5 != nil {
			*v5 = true
		}
		switch kind {
		case 1: // OpCode
			if len(body) >= 1 {
				m.Opcode = body[0]
			}
		case 2: // V2Params
			tc := &Cursor{b: body}
			n := tc.U32()
			if int64(n) > int64(len(body)) {
				return fmt.Errorf("V2 field count %d exceeds its tag", n)
			}
			fields := make([]Field, 0, n)
			for i := uint32(0); i < n; i++ {
				f, err := parseV2Field(tc, 0)
				if err != nil {
					return err
				}
				fields = append(fields, f)
			}
			m.Fields = fields
			m.HasFields = true
		}
	}
	return nil
}

func parseV1Fields(c *Cursor, n, depth int) ([]Field, error) {
	if depth > maxFieldDepth {
		return nil, errors.New("struct fields nested too deeply")
	}
	fields := make([]Field, 0, min(n, 64))
	for i := 0; i < n; i++ {
		code := TypeCode(c.U32())
		var f Field
		f.Type.Code = code
		if code == TypeObject {
			k := c.U32()
			if int64(k) > int64(c.Rest()) {
				return nil, fmt.Errorf("nested field count %d exceeds the record", k)
			}
			sub, err := parseV1Fields(c, int(k), depth+1)
			if err != nil {
				return nil, err
			}
			f.Type.Fields = sub
		}
		f.Name = c.UTF16Z()
		if c.err != nil {
			return nil, fmt.Errorf("field %d: %w", i, c.err)
		}
		fields = append(fields, f)
	}
	return fields, nil
}

// parseV2Field reads one V2Params field: size, name, type code, element type
// for arrays, nested fields for objects.
func parseV2Field(c *Cursor, depth int) (Field, error) {
	var f Field
	if depth > maxFieldDepth {
		return f, errors.New("V2 fields nested too deeply")
	}
	start := c.p
	size := int(c.U32())
	f.Name = c.UTF16Z()
	t, err := parseV2Type(c, depth)
	if err != nil {
		return f, err
	}
	f.Type = t
	if c.err != nil {
		return f, c.err
	}
	if size >= 4 && start+size > c.p && start+size <= len(c.b) {
		c.p = start + size // padding
	}
	return f, nil
}

func parseV2Type(c *Cursor, depth int) (FieldType, error) {
	var t FieldType
	t.Code = TypeCode(c.U32())
	if t.Code == TypeArray {
		et, err := parseV2Type(c, depth+1)
		if err != nil {
			return t, err
		}
		t.Elem = &et
		return t, nil
	}
	if t.Code == TypeObject {
		n := c.U32()
		if int64(n) > int64(c.Rest()) {
			return t, fmt.Errorf("nested field count %d exceeds the record", n)
		}
		for i := uint32(0); i < n; i++ {
			f, err := parseV2Field(c, depth+1)
			if err != nil {
				return t, err
			}
			t.Fields = append(t.Fields, f)
		}
	}
	return t, c.err
}

// opcodeNames are the standard ETW opcode names TraceEvent uses.
var opcodeNames = map[uint8]string{
	1: "Start", 2: "Stop", 3: "DCStart", 4: "DCStop", 5: "Extension",
	6: "Reply", 7: "Resume", 8: "Suspend", 9: "Send", 240: "Receive",
}

// displayName computes the TraceEvent-style name of an event type.
func displayName(m *Metadata) string {
	if n := runtimeEventName(m.Provider, m.EventID); n != "" && m.EventName == "" {
		return n
	}
	name := m.EventName
	if name == "" {
		return "EventID(" + strconv.FormatUint(uint64(m.EventID), 10) + ")"
	}
	switch m.Opcode {
	case 0:
		return name
	case 1, 2:
		// EventSource start/stop events already say so in their name.
		if suffix := opcodeNames[m.Opcode]; len(name) > len(suffix) && name[len(name)-len(suffix):] == suffix {
			return name
		}
	}
	if on, ok := opcodeNames[m.Opcode]; ok {
		return name + "/" + on
	}
	return name + "/" + strconv.Itoa(int(m.Opcode))
}
