package clrmeta

import (
	"encoding/binary"
	"errors"
	"io"
	"sort"
	"sync"

	"github.com/clrspy/clrspy/internal/procfs"
)

// R2RMethods names the precompiled (ReadyToRun) code of a managed module
// file by the methods it belongs to: the ReadyToRun header (the CLI
// header's ManagedNativeHeader), its RuntimeFunctions section (the code's
// address ranges) and its MethodDefEntryPoints section (which
// RuntimeFunctions entry each MethodDef row starts at), then the
// MethodDef and TypeDef tables for the names. It names what the
// runtime's method events did not (code run before the session, or never
// listed by its rundown). Generic instantiations
// (InstanceMethodEntryPoints) and funclets are not named.
type R2RMethods struct {
	sections []section
	funcs    []r2rFunc // sorted by start
}

type r2rFunc struct {
	start, end uint32 // RVAs
	name       string
}

// ReadyToRun section types (src/coreclr/inc/readytorun.h).
const (
	r2rRuntimeFunctions     = 102
	r2rMethodDefEntryPoints = 103
	r2rSignature            = 0x00525452 // "RTR"
	maxR2RSection           = 64 << 20
)

// OpenR2RMethods reads the ReadyToRun method map of the module at path.
// A module without ReadyToRun code is an error.
func OpenR2RMethods(path string) (*R2RMethods, error) {
	m, err := readModule(path, ReadR2RMethods)
	if err != nil {
		return nil, err
	}
	return m, nil
}

// ReadR2RMethods is OpenR2RMethods on an open file of size bytes.
func ReadR2RMethods(r io.ReaderAt, size int64) (*R2RMethods, error) {
	pe, cli, err := openCLI(r, size, 72)
	if err != nil {
		return nil, err
	}
	hdrRVA, hdrSize := binary.LittleEndian.Uint32(cli[64:]), binary.LittleEndian.Uint32(cli[68:])
	if hdrRVA == 0 || hdrSize < 16 {
		return nil, errors.New("no ReadyToRun code (no ManagedNativeHeader)")
	}
	h, err := pe.readRVA(hdrRVA, 16)
	if err != nil {
		return nil, err
	}
	if binary.LittleEndian.Uint32(h) != r2rSignature {
		return nil, errors.New("no ReadyToRun header signature")
	}
	n := binary.LittleEndian.Uint32(h[12:])
	if n > 256 {
		return nil, errors.New("malformed ReadyToRun header")
	}
	secs, err := pe.readRVA(hdrRVA+16, 12*n)
	if err != nil {
		return nil, err
	}
	var rf, ep [2]uint32
	for i := range n {
		b := secs[12*i:]
		d := [2]uint32{binary.LittleEndian.Uint32(b[4:]), binary.LittleEndian.Uint32(b[8:])}
		switch binary.LittleEndian.Uint32(b) {
		case r2rRuntimeFunctions:
			rf = d
		case r2rMethodDefEntryPoints:
			ep = d
		}
	}
	if rf[0] == 0 || ep[0] == 0 || rf[1] > maxR2RSection || ep[1] > maxR2RSection {
		return nil, errors.New("no ReadyToRun method entry points")
	}
	// RUNTIME_FUNCTION: begin, end, unwind on x64 (12 bytes); begin,
	// unwind elsewhere (8 bytes: a function ends where the next begins).
	width := uint32(8)
	if m := pe.machine; m == 0x8664 || m^0x7B79 == 0x8664 || m^0x4644 == 0x8664 || m^0x1993 == 0x8664 || m^0xADC4 == 0x8664 {
		width = 12
	}
	rfb, err := pe.readRVA(rf[0], rf[1])
	if err != nil {
		return nil, err
	}
	epb, err := pe.readRVA(ep[0], ep[1])
	if err != nil {
		return nil, err
	}
	md, err := metadata(r, size)
	if err != nil {
		return nil, err
	}
	nf := int(rf[1] / width)
	starts := make([]uint32, nf+1)
	ends := make([]uint32, nf)
	for i := range nf {
		starts[i] = binary.LittleEndian.Uint32(rfb[uint32(i)*width:])
		if width == 12 {
			ends[i] = binary.LittleEndian.Uint32(rfb[uint32(i)*width+4:])
		}
	}
	for i := range nf {
		if width == 8 {
			if i+1 < nf {
				ends[i] = starts[i+1]
			} else {
				ends[i] = starts[i] + 1
			}
		}
	}
	arr := nativeArray{b: epb, base: ep[0]}
	if !arr.init() {
		return nil, errors.New("malformed MethodDefEntryPoints")
	}
	owner := make([]uint32, nf) // the MethodDef row each function's body starts, 0: none
	nm := md.rows[tMethodDef]
	for rid := uint32(1); rid <= nm; rid++ {
		off, ok := arr.at(rid - 1)
		if !ok {
			continue
		}
		id, _, ok := arr.unsigned(off)
		if !ok {
			continue
		}
		if id&1 != 0 {
			id >>= 2 // with fixups
		} else {
			id >>= 1
		}
		if id < uint32(nf) {
			owner[id] = rid
		}
	}
	m := &R2RMethods{sections: pe.sections}
	types := typeOwners(md)
	enclosing := map[uint32]uint32{}
	for r := uint32(1); r <= md.rows[tNestedClass]; r++ {
		enclosing[md.col(tNestedClass, r, 0)] = md.col(tNestedClass, r, 1)
	}
	// Only the bodies an entry point starts are named: a function none
	// starts is a funclet or a generic instantiation's code, which an
	// address alone does not tell apart.
	for i := range nf {
		if rid := owner[i]; rid != 0 {
			m.funcs = append(m.funcs, r2rFunc{start: starts[i], end: ends[i], name: methodName(md, rid, types, enclosing)})
		}
	}
	sort.Slice(m.funcs, func(i, j int) bool { return m.funcs[i].start < m.funcs[j].start })
	return m, nil
}

// typeOwners is each TypeDef's first MethodDef row, in row order.
func typeOwners(md *tables) []uint32 {
	out := make([]uint32, md.rows[tTypeDef])
	for r := uint32(1); r <= md.rows[tTypeDef]; r++ {
		out[r-1] = md.col(tTypeDef, r, 5)
	}
	return out
}

// methodName is MethodDef row rid's Namespace.Type.Method(args), as the
// runtime's method events name it.
func methodName(md *tables, rid uint32, types []uint32, enclosing map[uint32]uint32) string {
	name := md.str(md.col(tMethodDef, rid, 3)) + md.methodArgs(md.blobAt(md.col(tMethodDef, rid, 4)))
	// The declaring type: the last TypeDef whose method list starts at
	// or before rid.
	t := sort.Search(len(types), func(i int) bool { return types[i] > rid })
	if t == 0 {
		return name
	}
	return md.typeDefName(uint32(t), enclosing) + "." + name
}

// Len is the number of named code ranges (bodies and funclets).
func (m *R2RMethods) Len() int { return len(m.funcs) }

// LookupRVA names the method whose code holds rva.
func (m *R2RMethods) LookupRVA(rva uint32) (string, bool) {
	i := sort.Search(len(m.funcs), func(i int) bool { return m.funcs[i].start > rva }) - 1
	if i >= 0 && rva < m.funcs[i].end {
		return m.funcs[i].name, true
	}
	return "", false
}

// LookupFileOffset names the method whose code is at file offset off
// (an address in a mapping of the file less the mapping's start, plus its
// file offset: the runtime maps each section at its address).
func (m *R2RMethods) LookupFileOffset(off uint64) (string, bool) {
	for _, s := range m.sections {
		if off >= uint64(s.raw) && off < uint64(s.raw)+uint64(s.rawSize) {
			return m.LookupRVA(uint32(off - uint64(s.raw) + uint64(s.va)))
		}
	}
	return "", false
}

// FileOffset is the file offset of rva ("false" when no section holds it).
func (m *R2RMethods) FileOffset(rva uint32) (uint64, bool) {
	for _, s := range m.sections {
		if rva >= s.va && rva < s.va+s.rawSize {
			return uint64(rva-s.va) + uint64(s.raw), true
		}
	}
	return 0, false
}

// nativeArray reads a NativeFormat array (src/coreclr/vm/nativeformatreader.h):
// b holds the section at RVA base; offsets are RVAs.
type nativeArray struct {
	b        []byte
	base     uint32
	start    uint32 // RVA of the index
	n        uint32
	idxWidth uint32
}

const nativeBlock = 16

func (a *nativeArray) init() bool {
	v, next, ok := a.unsigned(a.base)
	if !ok {
		return false
	}
	a.n, a.start = v>>2, next
	switch v & 3 {
	case 0:
		a.idxWidth = 1
	case 1:
		a.idxWidth = 2
	case 2:
		a.idxWidth = 4
	default:
		return false
	}
	return true
}

func (a *nativeArray) byteAt(rva uint32) (byte, bool) {
	if rva < a.base || rva-a.base >= uint32(len(a.b)) {
		return 0, false
	}
	return a.b[rva-a.base], true
}

// unsigned decodes a NativeFormat unsigned integer at rva: the value and
// the RVA after it.
func (a *nativeArray) unsigned(rva uint32) (uint32, uint32, bool) {
	if rva < a.base || rva-a.base >= uint32(len(a.b)) {
		return 0, 0, false
	}
	p := a.b[rva-a.base:]
	v := uint32(p[0])
	switch {
	case v&1 == 0:
		return v >> 1, rva + 1, true
	case v&2 == 0 && len(p) >= 2:
		return v>>2 | uint32(p[1])<<6, rva + 2, true
	case v&4 == 0 && len(p) >= 3:
		return v>>3 | uint32(p[1])<<5 | uint32(p[2])<<13, rva + 3, true
	case v&8 == 0 && len(p) >= 4:
		return v>>4 | uint32(p[1])<<4 | uint32(p[2])<<12 | uint32(p[3])<<20, rva + 4, true
	case v&16 == 0 && len(p) >= 5:
		return binary.LittleEndian.Uint32(p[1:]), rva + 5, true
	}
	return 0, 0, false
}

// at is the RVA of element i, false when the array has none there.
func (a *nativeArray) at(i uint32) (uint32, bool) {
	if i >= a.n {
		return 0, false
	}
	p := a.start + a.idxWidth*(i/nativeBlock)
	var off uint32
	for k := range a.idxWidth {
		c, ok := a.byteAt(p + k)
		if !ok {
			return 0, false
		}
		off |= uint32(c) << (8 * k)
	}
	off += a.start
	for bit := uint32(nativeBlock >> 1); bit > 0; bit >>= 1 {
		v, next, ok := a.unsigned(off)
		if !ok {
			return 0, false
		}
		if i&bit != 0 {
			if v&2 != 0 {
				off += v >> 2
				continue
			}
		} else if v&1 != 0 {
			off = next
			continue
		}
		if v&3 == 0 && v>>2 == i&(nativeBlock-1) {
			off = next
			break
		}
		return 0, false
	}
	return off, true
}

// Body is the code range (RVAs) of the first body named name.
func (m *R2RMethods) Body(name string) (start, end uint32, ok bool) {
	for _, f := range m.funcs {
		if f.name == name {
			return f.start, f.end, true
		}
	}
	return 0, 0, false
}

// R2RNamer names ReadyToRun code in the module files of one process by
// file path and offset, reading each file's method map once (through
// /proc/PID/root, else the same path here). Safe for concurrent use.
type R2RNamer struct {
	pid  int
	mu   sync.Mutex
	mods map[string]*R2RMethods // nil: not a ReadyToRun module, or unreadable
}

// NewR2RNamer returns a namer for the files of process pid (0: paths as
// they are).
func NewR2RNamer(pid int) *R2RNamer {
	return &R2RNamer{pid: pid, mods: map[string]*R2RMethods{}}
}

// Name is the method whose precompiled code is at file offset off of the
// module at path; "" when none is known.
func (n *R2RNamer) Name(path string, off uint64) string {
	if n == nil {
		return ""
	}
	n.mu.Lock()
	m, ok := n.mods[path]
	if !ok {
		if n.pid > 0 {
			m, _ = OpenR2RMethods(procfs.Root(n.pid) + path)
		}
		if m == nil {
			m, _ = OpenR2RMethods(path)
		}
		n.mods[path] = m
	}
	n.mu.Unlock()
	if m == nil {
		return ""
	}
	name, _ := m.LookupFileOffset(off)
	return name
}
