package cdac

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// Memory is a target's address space (procfs.Mem).
type Memory interface {
	ReadAt(b []byte, addr int64) (int, error)
}

// Magic is "DNCCDAC\0" as a little-endian uint64.
const Magic = 0x0043414443434e44

// SymbolName is the contract descriptor's exported symbol.
const SymbolName = "DotNetRuntimeContractDescriptor"

// maxJSON bounds the descriptor's JSON (10.0's is about 10 KB).
const maxJSON = 4 << 20

// maxPointerData bounds the indirect globals' table.
const maxPointerData = 1 << 16

// Type is one type of the descriptor: its size (-1 when not given) and
// its fields' offsets.
type Type struct {
	Size   int
	Fields map[string]int
}

// Descriptor is a runtime's data contract descriptor.
type Descriptor struct {
	PtrSize  int
	Version  int
	Baseline string
	Types    map[string]Type
	// Globals are the numeric globals: direct values, and indirect ones
	// resolved through the pointer data (an address, for most).
	Globals map[string]uint64
	// Strings are the string globals (OperatingSystem, Architecture, RID).
	Strings   map[string]string
	Contracts map[string]int
}

// Field is the offset of field in type typ.
func (d *Descriptor) Field(typ, field string) (int, bool) {
	t, ok := d.Types[typ]
	if !ok {
		return 0, false
	}
	o, ok := t.Fields[field]
	return o, ok
}

// MustField is Field, with an error naming what the descriptor lacks.
func (d *Descriptor) MustField(typ, field string) (int, error) {
	if o, ok := d.Field(typ, field); ok {
		return o, nil
	}
	return 0, fmt.Errorf("the runtime's data descriptor has no field %s.%s", typ, field)
}

// Global is a numeric global's value, with an error naming it if absent.
func (d *Descriptor) Global(name string) (uint64, error) {
	if v, ok := d.Globals[name]; ok {
		return v, nil
	}
	return 0, fmt.Errorf("the runtime's data descriptor has no global %s", name)
}

// ReadDescriptor reads the contract descriptor at addr of m.
func ReadDescriptor(m Memory, addr uint64) (*Descriptor, error) {
	var h [40]byte
	if _, err := m.ReadAt(h[:], int64(addr)); err != nil {
		return nil, fmt.Errorf("contract descriptor: %w", err)
	}
	if binary.LittleEndian.Uint64(h[:]) != Magic {
		return nil, fmt.Errorf("contract descriptor at %#x: bad magic %#x", addr, binary.LittleEndian.Uint64(h[:]))
	}
	flags := binary.LittleEndian.Uint32(h[8:])
	size := binary.LittleEndian.Uint32(h[12:])
	ps := 8
	var jsonAt, count, dataAt uint64
	if flags&2 != 0 {
		ps = 4
		jsonAt = uint64(binary.LittleEndian.Uint32(h[16:]))
		count = uint64(binary.LittleEndian.Uint32(h[20:]))
		dataAt = uint64(binary.LittleEndian.Uint32(h[28:]))
	} else {
		jsonAt = binary.LittleEndian.Uint64(h[16:])
		count = uint64(binary.LittleEndian.Uint32(h[24:]))
		dataAt = binary.LittleEndian.Uint64(h[32:])
	}
	if size == 0 || size > maxJSON {
		return nil, fmt.Errorf("contract descriptor at %#x: descriptor size %d out of range", addr, size)
	}
	if count > maxPointerData {
		return nil, fmt.Errorf("contract descriptor at %#x: %d pointer data entries, more than %d", addr, count, maxPointerData)
	}
	js := make([]byte, size)
	if _, err := m.ReadAt(js, int64(jsonAt)); err != nil {
		return nil, fmt.Errorf("contract descriptor's JSON: %w", err)
	}
	js = bytes.TrimRight(js, "\x00")
	pd := make([]uint64, count)
	if count > 0 {
		raw := make([]byte, int(count)*ps)
		if _, err := m.ReadAt(raw, int64(dataAt)); err != nil {
			return nil, fmt.Errorf("contract descriptor's pointer data: %w", err)
		}
		for i := range pd {
			if ps == 4 {
				pd[i] = uint64(binary.LittleEndian.Uint32(raw[4*i:]))
			} else {
				pd[i] = binary.LittleEndian.Uint64(raw[8*i:])
			}
		}
	}
	d, err := ParseJSON(js, pd)
	if err != nil {
		return nil, err
	}
	d.PtrSize = ps
	return d, nil
}

// ParseJSON reads a descriptor's JSON (data_descriptor.md's compact form)
// with its pointer data (the values of the indirect globals).
func ParseJSON(js []byte, pointerData []uint64) (*Descriptor, error) {
	var raw struct {
		Version   int                                   `json:"version"`
		Baseline  string                                `json:"baseline"`
		Types     map[string]map[string]json.RawMessage `json:"types"`
		Globals   map[string]json.RawMessage            `json:"globals"`
		Contracts map[string]int                        `json:"contracts"`
	}
	if err := json.Unmarshal(js, &raw); err != nil {
		return nil, fmt.Errorf("contract descriptor's JSON: %v", err)
	}
	if raw.Baseline != "" && raw.Baseline != "empty" {
		return nil, fmt.Errorf("contract descriptor: baseline %q is not known to clrspy (only complete descriptors are read)", raw.Baseline)
	}
	d := &Descriptor{PtrSize: 8, Version: raw.Version, Baseline: raw.Baseline, Types: map[string]Type{},
		Globals: map[string]uint64{}, Strings: map[string]string{}, Contracts: raw.Contracts}
	if d.Contracts == nil {
		d.Contracts = map[string]int{}
	}
	for name, fields := range raw.Types {
		t := Type{Size: -1, Fields: map[string]int{}}
		for f, v := range fields {
			off, err := fieldOffset(v)
			if err != nil {
				return nil, fmt.Errorf("contract descriptor: type %s field %s: %v", name, f, err)
			}
			if f == "!" {
				t.Size = off
			} else {
				t.Fields[f] = off
			}
		}
		d.Types[name] = t
	}
	for name, v := range raw.Globals {
		if err := d.global(name, v, pointerData); err != nil {
			return nil, fmt.Errorf("contract descriptor: global %s: %v", name, err)
		}
	}
	return d, nil
}

// fieldOffset is a field's offset: a number, or [number, "type"].
func fieldOffset(v json.RawMessage) (int, error) {
	var n int
	if json.Unmarshal(v, &n) == nil {
		return n, nil
	}
	var pair []json.RawMessage
	if json.Unmarshal(v, &pair) == nil && len(pair) >= 1 && json.Unmarshal(pair[0], &n) == nil {
		return n, nil
	}
	return 0, errors.New("not an offset")
}

// global reads one global: a value (a number, or a string holding one),
// [index] into the pointer data, either with a type ([value, "type"]); a
// "string" typed global is text.
func (d *Descriptor) global(name string, v json.RawMessage, pd []uint64) error {
	var pair []json.RawMessage
	typ := ""
	if json.Unmarshal(v, &pair) == nil {
		switch {
		case len(pair) == 2 && json.Unmarshal(pair[1], &typ) == nil:
			v = pair[0]
		case len(pair) == 1:
			// [index]: an indirect value without a type.
		default:
			return errors.New("not a value")
		}
	}
	var idx []uint64
	if json.Unmarshal(v, &idx) == nil {
		if len(idx) != 1 || idx[0] >= uint64(len(pd)) {
			return fmt.Errorf("indirect index %v outside the %d pointer data entries", idx, len(pd))
		}
		d.Globals[name] = pd[idx[0]]
		return nil
	}
	var n uint64
	if json.Unmarshal(v, &n) == nil {
		d.Globals[name] = n
		return nil
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return errors.New("not a value")
	}
	if typ == "string" {
		d.Strings[name] = s
		return nil
	}
	n, err := strconv.ParseUint(s, 0, 64)
	if err != nil {
		if i, err2 := strconv.ParseInt(s, 0, 64); err2 == nil {
			n = uint64(i)
		} else {
			return fmt.Errorf("value %q is not a number", s)
		}
	}
	d.Globals[name] = n
	return nil
}
