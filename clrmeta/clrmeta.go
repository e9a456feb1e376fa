package clrmeta

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/clrspy/clrspy/internal/procfs"
)

// StaticField is a static field and the class that declares it.
type StaticField struct {
	// Class is the declaring class's full name as the runtime writes it:
	// Namespace.Name, a nested class as Outer+Inner.
	Class string
	Field string
	// FieldType names the type the field is declared with
	// ("System.String", "MyApp.Cache", "MyApp.Item[]"); "" when the
	// signature names no simple type (a generic instantiation, a type
	// parameter, a multi-dimensional array).
	FieldType string
	// Reference: the field holds a reference or a struct (the statics
	// the runtime reports as roots), not a primitive or a pointer.
	Reference bool
	// Module is the file's path as given; Order the field's rank in
	// the module (classes in metadata order, then their fields): the
	// order the runtime walks statics in.
	Module string
	Order  int
}

// maxMetadata bounds the metadata read from one file (CoreLib's is about
// 5 MB).
const maxMetadata = 256 << 20

// maxModule bounds the size of a module file opened at all.
const maxModule = 4 << 30

var errFormat = errors.New("malformed metadata")

// StaticFields returns the static fields (literals excluded) of the
// managed module at path whose names are in want (every one when want is
// nil).
func StaticFields(path string, want map[string]bool) ([]StaticField, error) {
	// A module path comes from an input (a .gcdump, a trace's
	// ModuleLoad, a runtime): readModule opens regular files only.
	md, err := readModule(path, metadata)
	if err != nil {
		return nil, err
	}
	out, err := md.statics(want)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for i := range out {
		out[i].Module = path
	}
	return out, nil
}

// section is a PE section header's mapping of addresses to the file.
type section struct{ va, vsize, raw, rawSize uint32 }

// peFile is what metadata needs of a PE file: its sections. (debug/pe
// refuses ReadyToRun images, whose machine field is XORed with an OS
// constant: 0xfd1d for Linux x64.)
type peFile struct {
	r        io.ReaderAt
	size     int64 // the file's: no read past it (nor a buffer for one)
	sections []section
	cli      [2]uint32 // the CLI header's directory entry: address, size
	machine  uint16    // the COFF header's (XORed with an OS constant in ReadyToRun images)
}

func openPE(r io.ReaderAt, size int64) (*peFile, error) {
	var h [64]byte
	if _, err := r.ReadAt(h[:], 0); err != nil || h[0] != 'M' || h[1] != 'Z' {
		return nil, errors.New("not a PE file")
	}
	off := int64(binary.LittleEndian.Uint32(h[0x3C:]))
	var coff [24]byte
	if _, err := r.ReadAt(coff[:], off); err != nil || string(coff[:4]) != "PE\x00\x00" {
		return nil, errors.New("not a PE file")
	}
	nsec := int(binary.LittleEndian.Uint16(coff[6:]))
	optSize := int(binary.LittleEndian.Uint16(coff[20:]))
	opt := make([]byte, optSize)
	if _, err := r.ReadAt(opt, off+24); err != nil || optSize < 2 {
		return nil, errors.New("no PE optional header")
	}
	dirs := 96 // PE32
	if binary.LittleEndian.Uint16(opt) == 0x20B {
		dirs = 112 // PE32+
	}
	p := &peFile{r: r, size: size, machine: binary.LittleEndian.Uint16(coff[4:])}
	if e := dirs + 15*8; e <= optSize && binary.LittleEndian.Uint32(opt[dirs-4:]) > 14 {
		p.cli = [2]uint32{binary.LittleEndian.Uint32(opt[dirs+14*8:]), binary.LittleEndian.Uint32(opt[dirs+14*8+4:])}
	}
	if nsec > 256 {
		return nil, errors.New("too many PE sections")
	}
	sh := make([]byte, 40*nsec)
	if _, err := r.ReadAt(sh, off+24+int64(optSize)); err != nil {
		return nil, errors.New("truncated PE section table")
	}
	for i := range nsec {
		b := sh[40*i:]
		p.sections = append(p.sections, section{va: binary.LittleEndian.Uint32(b[12:]), vsize: binary.LittleEndian.Uint32(b[8:]),
			raw: binary.LittleEndian.Uint32(b[20:]), rawSize: binary.LittleEndian.Uint32(b[16:])})
	}
	return p, nil
}

// Reader returns StaticFields reading the files of process pid (0: where
// the paths say, for a trace's modules): a live target's files through
// /proc/PID/root, so a process in a container resolves.
func Reader(pid int) func(path string, want map[string]bool) ([]StaticField, error) {
	return func(path string, want map[string]bool) ([]StaticField, error) {
		if pid > 0 {
			p := procfs.Root(pid) + path
			if _, err := os.Stat(p); err == nil {
				path = p
			}
		}
		return StaticFields(path, want)
	}
}

// readRVA reads n bytes at a relative virtual address.
func (p *peFile) readRVA(rva, n uint32) ([]byte, error) {
	for _, s := range p.sections {
		if rva >= s.va && uint64(rva)+uint64(n) <= uint64(s.va)+uint64(s.rawSize) {
			if uint64(s.raw)+uint64(rva-s.va)+uint64(n) > uint64(p.size) {
				return nil, errors.New("the metadata lies past the end of the file")
			}
			b := make([]byte, n)
			if _, err := p.r.ReadAt(b, int64(s.raw)+int64(rva-s.va)); err != nil {
				return nil, err
			}
			return b, nil
		}
	}
	return nil, fmt.Errorf("address 0x%x is in no section", rva)
}

// tables is a module's parsed #~ stream with its heaps.
type tables struct {
	strings, blob []byte
	rows          [64]uint32
	data          [64][]byte // each present table's rows
	width         [64][]int  // each table's column widths
}

// openCLI opens a managed module's PE image and reads the first n bytes
// of its CLI header.
func openCLI(r io.ReaderAt, size int64, n uint32) (*peFile, []byte, error) {
	f, err := openPE(r, size)
	if err != nil {
		return nil, nil, err
	}
	if f.cli[0] == 0 || f.cli[1] < n {
		return nil, nil, errors.New("not a managed module (no CLI header)")
	}
	cli, err := f.readRVA(f.cli[0], n)
	if err != nil {
		return nil, nil, err
	}
	return f, cli, nil
}

func metadata(r io.ReaderAt, size int64) (*tables, error) {
	f, cli, err := openCLI(r, size, 16)
	if err != nil {
		return nil, err
	}
	mdRVA, mdSize := binary.LittleEndian.Uint32(cli[8:]), binary.LittleEndian.Uint32(cli[12:])
	if mdSize < 20 || mdSize > maxMetadata {
		return nil, fmt.Errorf("metadata of %d bytes", mdSize)
	}
	md, err := f.readRVA(mdRVA, mdSize)
	if err != nil {
		return nil, err
	}
	if binary.LittleEndian.Uint32(md) != 0x424A5342 {
		return nil, errors.New("no metadata signature")
	}
	vlen := binary.LittleEndian.Uint32(md[12:])
	p := 16 + uint64(vlen)
	if p+4 > uint64(len(md)) {
		return nil, errFormat
	}
	nstreams := int(binary.LittleEndian.Uint16(md[p+2:]))
	p += 4
	t := &tables{}
	var tilde []byte
	for range nstreams {
		if p+8 > uint64(len(md)) {
			return nil, errFormat
		}
		off, size := uint64(binary.LittleEndian.Uint32(md[p:])), uint64(binary.LittleEndian.Uint32(md[p+4:]))
		p += 8
		end := bytes.IndexByte(md[p:], 0)
		if end < 0 {
			return nil, errFormat
		}
		name := string(md[p : p+uint64(end)])
		p += (uint64(end) + 4) &^ 3
		if off+size > uint64(len(md)) {
			return nil, errFormat
		}
		s := md[off : off+size]
		switch name {
		case "#~":
			tilde = s
		case "#-":
			return nil, errors.New("uncompressed (edit-and-continue) metadata is not read")
		case "#Strings":
			t.strings = s
		case "#Blob":
			t.blob = s
		}
	}
	if tilde == nil {
		return nil, errors.New("no #~ stream")
	}
	return t, t.parse(tilde)
}

// Column kinds of the table schema: fixed widths are 1, 2 and 4;
// the others are heap or table indexes whose width depends on sizes.
const (
	cStr = -1 - iota
	cGUID
	cBlob
	cTypeDefOrRef
	cHasConstant
	cHasCustomAttribute
	cHasFieldMarshal
	cHasDeclSecurity
	cMemberRefParent
	cHasSemantics
	cMethodDefOrRef
	cMemberForwarded
	cImplementation
	cCustomAttributeType
	cResolutionScope
	cTypeOrMethodDef
	cTable = 1000 // cTable + id: an index into table id
)

// Table ids used by name.
const (
	tModule       = 0x00
	tTypeRef      = 0x01
	tTypeDef      = 0x02
	tField        = 0x04
	tMethodDef    = 0x06
	tParam        = 0x08
	tMemberRef    = 0x0A
	tEvent        = 0x14
	tProperty     = 0x17
	tModuleRef    = 0x1A
	tTypeSpec     = 0x1B
	tAssembly     = 0x20
	tAssemblyRef  = 0x23
	tFile         = 0x26
	tExportedType = 0x27
	tNestedClass  = 0x29
	tGenericParam = 0x2A
)

// schema is ECMA-335 II.22's columns of each table up to
// GenericParamConstraint (tables are stored in id order, so those after
// NestedClass only need to be known to be skipped: none is read).
var schema = [...][]int{
	0x00: {2, cStr, cGUID, cGUID, cGUID},
	0x01: {cResolutionScope, cStr, cStr},
	0x02: {4, cStr, cStr, cTypeDefOrRef, cTable + tField, cTable + tMethodDef},
	0x03: {cTable + tField},
	0x04: {2, cStr, cBlob},
	0x05: {cTable + tMethodDef},
	0x06: {4, 2, 2, cStr, cBlob, cTable + tParam},
	0x07: {cTable + tParam},
	0x08: {2, 2, cStr},
	0x09: {cTable + tTypeDef, cTypeDefOrRef},
	0x0A: {cMemberRefParent, cStr, cBlob},
	0x0B: {1, 1, cHasConstant, cBlob},
	0x0C: {cHasCustomAttribute, cCustomAttributeType, cBlob},
	0x0D: {cHasFieldMarshal, cBlob},
	0x0E: {2, cHasDeclSecurity, cBlob},
	0x0F: {2, 4, cTable + tTypeDef},
	0x10: {4, cTable + tField},
	0x11: {cBlob},
	0x12: {cTable + tTypeDef, cTable + tEvent},
	0x13: {cTable + tEvent},
	0x14: {2, cStr, cTypeDefOrRef},
	0x15: {cTable + tTypeDef, cTable + tProperty},
	0x16: {cTable + tProperty},
	0x17: {2, cStr, cBlob},
	0x18: {2, cTable + tMethodDef, cHasSemantics},
	0x19: {cTable + tTypeDef, cMethodDefOrRef, cMethodDefOrRef},
	0x1A: {cStr},
	0x1B: {cBlob},
	0x1C: {2, cMemberForwarded, cStr, cTable + tModuleRef},
	0x1D: {4, cTable + tField},
	0x1E: {4, 4},
	0x1F: {4},
	0x20: {4, 2, 2, 2, 2, 4, cBlob, cStr, cStr},
	0x21: {4},
	0x22: {4, 4, 4},
	0x23: {2, 2, 2, 2, 4, cBlob, cStr, cStr, cBlob},
	0x24: {4, cTable + tAssemblyRef},
	0x25: {4, 4, 4, cTable + tAssemblyRef},
	0x26: {4, cStr, cBlob},
	0x27: {4, 4, cStr, cStr, cImplementation},
	0x28: {4, 4, cStr, cImplementation},
	0x29: {cTable + tTypeDef, cTable + tTypeDef},
	0x2A: {2, 2, cTypeOrMethodDef, cStr},
	0x2B: {cMethodDefOrRef, cBlob},
	0x2C: {cTable + tGenericParam, cTypeDefOrRef},
}

// coded is each coded index's tag bits and tables (ECMA-335 II.24.2.6;
// -1: a tag no table uses).
var coded = map[int]struct {
	bits   uint
	tables []int
}{
	cTypeDefOrRef: {2, []int{tTypeDef, tTypeRef, tTypeSpec}},
	cHasConstant:  {2, []int{tField, tParam, tProperty}},
	cHasCustomAttribute: {5, []int{tMethodDef, tField, tTypeRef, tTypeDef, tParam, 0x09, tMemberRef, tModule, 0x0E,
		tProperty, tEvent, 0x11, tModuleRef, tTypeSpec, tAssembly, tAssemblyRef, tFile, tExportedType, 0x28,
		tGenericParam, 0x2C, 0x2B}},
	cHasFieldMarshal:     {1, []int{tField, tParam}},
	cHasDeclSecurity:     {2, []int{tTypeDef, tMethodDef, tAssembly}},
	cMemberRefParent:     {3, []int{tTypeDef, tTypeRef, tModuleRef, tMethodDef, tTypeSpec}},
	cHasSemantics:        {1, []int{tEvent, tProperty}},
	cMethodDefOrRef:      {1, []int{tMethodDef, tMemberRef}},
	cMemberForwarded:     {1, []int{tField, tMethodDef}},
	cImplementation:      {2, []int{tFile, tAssemblyRef, tExportedType}},
	cCustomAttributeType: {3, []int{-1, -1, tMethodDef, tMemberRef, -1}},
	cResolutionScope:     {2, []int{tModule, tModuleRef, tAssemblyRef, tTypeRef}},
	cTypeOrMethodDef:     {1, []int{tTypeDef, tMethodDef}},
}

// parse reads the #~ stream's header and slices each table.
func (t *tables) parse(s []byte) error {
	if len(s) < 24 {
		return errFormat
	}
	heap := s[6]
	valid := binary.LittleEndian.Uint64(s[8:])
	p := 24
	for i := range 64 {
		if valid&(1<<i) == 0 {
			continue
		}
		if p+4 > len(s) {
			return errFormat
		}
		t.rows[i] = binary.LittleEndian.Uint32(s[p:])
		p += 4
	}
	if heap&0x40 != 0 {
		p += 4 // extra data
	}
	width := func(kind int) int {
		switch {
		case kind > 0 && kind < cTable:
			return kind
		case kind >= cTable:
			if t.rows[kind-cTable] < 1<<16 {
				return 2
			}
			return 4
		case kind == cStr && heap&1 == 0, kind == cGUID && heap&2 == 0, kind == cBlob && heap&4 == 0:
			return 2
		case kind == cStr, kind == cGUID, kind == cBlob:
			return 4
		}
		c := coded[kind]
		var most uint32
		for _, id := range c.tables {
			if id >= 0 {
				most = max(most, t.rows[id])
			}
		}
		if most < 1<<(16-c.bits) {
			return 2
		}
		return 4
	}
	for id := range 64 {
		if t.rows[id] == 0 {
			continue
		}
		if id >= len(schema) {
			break // after every table read: its layout does not matter
		}
		row := 0
		t.width[id] = make([]int, len(schema[id]))
		for i, k := range schema[id] {
			t.width[id][i] = width(k)
			row += t.width[id][i]
		}
		n := int(t.rows[id]) * row
		if n < 0 || p+n > len(s) {
			return errFormat
		}
		t.data[id] = s[p : p+n]
		p += n
	}
	return nil
}

// col reads column c of row r (1-based) of table id.
func (t *tables) col(id int, r uint32, c int) uint32 {
	w := t.width[id]
	if r == 0 || r > t.rows[id] || c >= len(w) {
		return 0
	}
	row := 0
	off := 0
	for i, x := range w {
		row += x
		if i < c {
			off += x
		}
	}
	b := t.data[id][int(r-1)*row+off:]
	if w[c] == 2 {
		return uint32(binary.LittleEndian.Uint16(b))
	}
	if w[c] == 1 {
		return uint32(b[0])
	}
	return binary.LittleEndian.Uint32(b)
}

// str reads a #Strings entry.
func (t *tables) str(i uint32) string {
	if int(i) >= len(t.strings) {
		return ""
	}
	s := t.strings[i:]
	if e := bytes.IndexByte(s, 0); e >= 0 {
		s = s[:e]
	}
	return string(s)
}

// blobAt reads a #Blob entry.
func (t *tables) blobAt(i uint32) []byte {
	if int(i) >= len(t.blob) {
		return nil
	}
	b := t.blob[i:]
	n, k := compressed(b)
	if k == 0 || uint64(k)+uint64(n) > uint64(len(b)) {
		return nil
	}
	return b[k : k+int(n)]
}

// compressed decodes an ECMA-335 compressed unsigned integer: the value
// and the bytes it took (0: malformed).
func compressed(b []byte) (uint32, int) {
	switch {
	case len(b) >= 1 && b[0]&0x80 == 0:
		return uint32(b[0]), 1
	case len(b) >= 2 && b[0]&0xC0 == 0x80:
		return uint32(b[0]&0x3F)<<8 | uint32(b[1]), 2
	case len(b) >= 4 && b[0]&0xE0 == 0xC0:
		return uint32(b[0]&0x1F)<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3]), 4
	}
	return 0, 0
}

// typeDefName is TypeDef row r's full name (nested: Outer+Inner).
func (t *tables) typeDefName(r uint32, enclosing map[uint32]uint32) string {
	name := t.str(t.col(tTypeDef, r, 1))
	for depth := 0; depth < 64; depth++ {
		outer, ok := enclosing[r]
		if !ok {
			break
		}
		r = outer
		name = t.str(t.col(tTypeDef, r, 1)) + "+" + name
	}
	if ns := t.str(t.col(tTypeDef, r, 2)); ns != "" {
		name = ns + "." + name
	}
	return name
}

// typeRefName is TypeRef row r's full name.
func (t *tables) typeRefName(r uint32) string {
	name := t.str(t.col(tTypeRef, r, 1))
	for depth := 0; depth < 64; depth++ {
		scope := t.col(tTypeRef, r, 0)
		if scope&3 != 3 { // not nested in another TypeRef
			break
		}
		r = scope >> 2
		name = t.str(t.col(tTypeRef, r, 1)) + "+" + name
	}
	if ns := t.str(t.col(tTypeRef, r, 2)); ns != "" {
		name = ns + "." + name
	}
	return name
}

// sigType names a field signature's type and says whether the field
// holds a reference or a struct.
func (t *tables) sigType(sig []byte, enclosing map[uint32]uint32) (string, bool) {
	if len(sig) < 2 || sig[0]&0x0F != 0x06 {
		return "", false
	}
	b := sig[1:]
	for len(b) > 0 && (b[0] == 0x1F || b[0] == 0x20) { // custom modifiers
		_, k := compressed(b[1:])
		if k == 0 {
			return "", false
		}
		b = b[1+k:]
	}
	return t.elemType(b, enclosing, 0)
}

func (t *tables) elemType(b []byte, enclosing map[uint32]uint32, depth int) (string, bool) {
	if len(b) == 0 || depth > 8 {
		return "", false
	}
	switch e := b[0]; {
	case e == 0x0E:
		return "System.String", true
	case e == 0x1C:
		return "System.Object", true
	case e == 0x11 || e == 0x12: // VALUETYPE, CLASS
		v, k := compressed(b[1:])
		if k == 0 {
			return "", false
		}
		switch v & 3 {
		case 0:
			return t.typeDefName(v>>2, enclosing), true
		case 1:
			return t.typeRefName(v >> 2), true
		}
		return "", true
	case e == 0x1D: // SZARRAY
		n, _ := t.elemType(b[1:], enclosing, depth+1)
		if n == "" {
			return "", true
		}
		return n + "[]", true
	case e == 0x14 || e == 0x15 || e == 0x13 || e == 0x1E: // ARRAY, GENERICINST, VAR, MVAR
		return "", true
	}
	return "", false // primitives, pointers
}

// statics lists the module's static fields whose names are in want.
func (t *tables) statics(want map[string]bool) ([]StaticField, error) {
	types, fields := t.rows[tTypeDef], t.rows[tField]
	enclosing := map[uint32]uint32{}
	for r := uint32(1); r <= t.rows[tNestedClass]; r++ {
		enclosing[t.col(tNestedClass, r, 0)] = t.col(tNestedClass, r, 1)
	}
	var out []StaticField
	for r := uint32(1); r <= types; r++ {
		first := t.col(tTypeDef, r, 4)
		last := fields + 1
		if r < types {
			last = t.col(tTypeDef, r+1, 4)
		}
		if first == 0 || last > fields+1 || first > last {
			return nil, errFormat
		}
		class := ""
		for fr := first; fr < last; fr++ {
			order := int(fr)
			flags := t.col(tField, fr, 0)
			if flags&0x10 == 0 || flags&0x40 != 0 { // not static, or a literal
				continue
			}
			name := t.str(t.col(tField, fr, 1))
			if want != nil && !want[name] {
				continue
			}
			if class == "" {
				class = t.typeDefName(r, enclosing)
			}
			ft, ref := t.sigType(t.blobAt(t.col(tField, fr, 2)), enclosing)
			out = append(out, StaticField{Class: class, Field: name, FieldType: ft, Reference: ref, Order: order})
		}
	}
	return out, nil
}

// readModule opens the module file at path (a regular file of at most
// maxModule bytes: a FIFO or a device named by an input must not hang the
// command) and reads it with read; read's error is prefixed with path.
func readModule[T any](path string, read func(io.ReaderAt, int64) (T, error)) (T, error) {
	var zero T
	f, err := procfs.OpenRegular(path, maxModule)
	if err != nil {
		return zero, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return zero, err
	}
	v, err := read(f, st.Size())
	if err != nil {
		return zero, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}
