package nettrace

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
	"unicode"
	"unicode/utf16"
)

// Value is one decoded field of a self-describing payload. V holds a Go
// value: bool, int8..int64, uint8..uint64, float32, float64, string, GUID,
// time.Time (DateTime), []byte (Decimal, raw 16 bytes), []any (arrays) or
// []Value (nested structs).
type Value struct {
	Name string
	V    any
}

// ErrNoFields is returned by DecodePayload for events whose metadata has
// no field list (runtime events: use package clrevents).
var ErrNoFields = errors.New("event metadata declares no fields")

// maxArrayElems bounds one decoded array; an element needs at least one
// byte, so a count larger than the payload is rejected before allocating.
const maxArrayElems = 1 << 20

// maxDecodedValues bounds the values decoded from one payload.
const maxDecodedValues = 1 << 22

// DecodePayload decodes a self-describing payload by its metadata.
func DecodePayload(m *Metadata, payload []byte, ptrSize int) ([]Value, error) {
	if !m.HasFields {
		return nil, ErrNoFields
	}
	c := &Cursor{b: payload, budget: maxDecodedValues}
	vals, err := decodeFields(c, m.Fields, ptrSize, 0)
	if err != nil {
		return vals, fmt.Errorf("%s/%s payload: %w", printable(m.Provider), printable(m.Name), err)
	}
	return vals, nil
}

func decodeFields(c *Cursor, fields []Field, ptr, depth int) ([]Value, error) {
	out := make([]Value, 0, len(fields))
	for _, f := range fields {
		v, err := decodeValue(c, &f.Type, ptr, depth)
		if err != nil {
			return out, fmt.Errorf("field %s: %w", printable(f.Name), err)
		}
		out = append(out, Value{Name: f.Name, V: v})
	}
	return out, nil
}

func decodeValue(c *Cursor, t *FieldType, ptr, depth int) (any, error) {
	if depth > maxFieldDepth {
		return nil, errors.New("nested too deeply")
	}
	// Fixed-length arrays of empty structs consume no bytes, so nesting
	// them could multiply into billions of values: cap the total.
	if c.budget--; c.budget < 0 {
		return nil, fmt.Errorf("more than %d values in one payload", maxDecodedValues)
	}
	var v any
	switch t.Code {
	case TypeObject:
		return decodeFields(c, t.Fields, ptr, depth+1)
	case TypeBoolean32:
		v = c.U32() != 0
	case TypeBoolean8:
		v = c.U8() != 0
	case TypeChar:
		v = rune(c.U16())
	case TypeSByte:
		v = int8(c.U8())
	case TypeByte, TypeUTF8CodeUnit:
		v = c.U8()
	case TypeInt16:
		v = int16(c.U16())
	case TypeUInt16:
		v = c.U16()
	case TypeInt32:
		v = int32(c.U32())
	case TypeUInt32:
		v = c.U32()
	case TypeInt64:
		v = int64(c.U64())
	case TypeUInt64:
		v = c.U64()
	case TypeSingle:
		v = math.Float32frombits(c.U32())
	case TypeDouble:
		v = math.Float64frombits(c.U64())
	case TypeDecimal:
		v = append([]byte(nil), c.Bytes(16)...)
	case TypeDateTime:
		// EventSource writes a FILETIME (100 ns since 1601-01-01 UTC).
		ft := int64(c.U64())
		v = time.Unix(0, 0).UTC().Add(time.Duration(ft-116444736000000000) * 100)
	case TypeGUID:
		var g GUID
		copy(g[:], c.Bytes(16))
		v = g
	case TypeString:
		v = c.UTF16Z()
	case TypeVarInt:
		u := c.Uvarint()
		v = int64(u>>1) ^ -int64(u&1)
	case TypeVarUInt:
		v = c.Uvarint()
	case TypeArray, TypeFixedLengthArray:
		if t.Elem == nil {
			return nil, errors.New("array without element type")
		}
		n := t.FixedLen
		if t.Code == TypeArray {
			n = int(c.U16())
		}
		if c.err != nil {
			return nil, c.err
		}
		if n > c.Rest() && elemMinSize(t.Elem) > 0 || n > maxArrayElems {
			return nil, fmt.Errorf("array of %d elements exceeds the payload", n)
		}
		if t.Elem.Code == TypeChar {
			// A char array is a counted string (TraceEvent reads it so).
			b := c.Bytes(2 * n)
			if c.err != nil {
				return nil, c.err
			}
			u := make([]uint16, n)
			for i := range u {
				u[i] = le16(b[2*i:])
			}
			return string(utf16.Decode(u)), nil
		}
		arr := make([]any, 0, n)
		for i := 0; i < n; i++ {
			e, err := decodeValue(c, t.Elem, ptr, depth+1)
			if err != nil {
				return nil, err
			}
			arr = append(arr, e)
		}
		return arr, nil
	default:
		return nil, fmt.Errorf("unsupported type code %d", t.Code)
	}
	if c.err != nil {
		return nil, c.err
	}
	return v, nil
}

// elemMinSize is the least number of bytes one element occupies.
func elemMinSize(t *FieldType) int {
	switch t.Code {
	case TypeObject:
		n := 0
		for i := range t.Fields {
			n += elemMinSize(&t.Fields[i].Type)
		}
		return n
	case TypeArray:
		return 2
	case TypeFixedLengthArray:
		return 0
	case TypeString:
		return 2
	}
	return 1
}

// printable is s, quoted when it holds a character that is not printable
// (a newline in a hostile field name must not split an error message).
func printable(s string) string {
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}
