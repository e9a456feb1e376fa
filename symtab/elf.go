package symtab

import (
	"bytes"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/clrspy/clrspy/internal/procfs"
	"github.com/clrspy/clrspy/unwind"
)

// File is one ELF file's code layout, symbols and call-frame information.
type File struct {
	Path    string // as mapped ("/usr/lib/x86_64-linux-gnu/libc.so.6")
	Name    string // base name ("libc.so.6")
	BuildID string // hex, "" when the file has no build-id note

	loads []segment
	cfi   *unwind.Table
	cfiOK bool // cfi parsed (or found missing)

	syms      []symbol
	symsOK    bool
	symSource string // where the symbols came from: "symtab", "debug", "dynsym", ""

	open   func() (io.ReaderAt, io.Closer, error)
	rootFS string // the target's root (/proc/PID/root) for debug-file lookups
	err    error  // why the file could not be read
}

type segment struct {
	off, vaddr, filesz uint64
}

type symbol struct {
	start, end uint64
	name       string
	rank       uint8 // alias preference: lower wins
}

// maxELFSection bounds the sections read into memory (hostile or corrupt
// headers claiming gigabytes).
const maxELFSection = 256 << 20

// OpenFile reads the ELF headers of path. Symbols and CFI are read on
// first use from the same path.
func OpenFile(path string) (*File, error) {
	return openFile(path, path, "")
}

// openFile reads the file at real (a path through /proc/PID/root) that the
// target maps as path.
func openFile(path, real, root string) (*File, error) {
	f := &File{Path: path, Name: filepath.Base(path), rootFS: root}
	f.open = func() (io.ReaderAt, io.Closer, error) {
		fh, err := procfs.OpenRegular(real, 0)
		if err != nil {
			return nil, nil, err
		}
		return fh, fh, nil
	}
	ra, c, err := f.open()
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if err := f.readHeaders(ra); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// NewFile reads an ELF file from memory (tests, fuzzing).
func NewFile(name string, data []byte) (*File, error) {
	f := &File{Path: name, Name: filepath.Base(name)}
	f.open = func() (io.ReaderAt, io.Closer, error) { return bytes.NewReader(data), io.NopCloser(nil), nil }
	if err := f.readHeaders(bytes.NewReader(data)); err != nil {
		return nil, err
	}
	return f, nil
}

// safeELF runs fn on the ELF file in ra; debug/elf can panic on corrupt
// input, which becomes an error here.
func safeELF(ra io.ReaderAt, fn func(*elf.File) error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("corrupt ELF file: %v", r)
		}
	}()
	ef, err := elf.NewFile(ra)
	if err != nil {
		return err
	}
	defer ef.Close()
	if ef.Class != elf.ELFCLASS64 || ef.Machine != elf.EM_X86_64 {
		return fmt.Errorf("not an x86-64 ELF file (%v %v)", ef.Class, ef.Machine)
	}
	return fn(ef)
}

func (f *File) readHeaders(ra io.ReaderAt) error {
	return safeELF(ra, func(ef *elf.File) error {
		for _, p := range ef.Progs {
			if p.Type == elf.PT_LOAD {
				f.loads = append(f.loads, segment{off: p.Off, vaddr: p.Vaddr, filesz: p.Filesz})
			}
		}
		if len(f.loads) == 0 {
			return errors.New("no loadable segment")
		}
		f.BuildID = buildID(ef)
		return nil
	})
}

// buildID reads the NT_GNU_BUILD_ID note.
func buildID(ef *elf.File) string {
	for _, s := range ef.Sections {
		if s.Type != elf.SHT_NOTE || s.Size > 1<<16 {
			continue
		}
		b, err := s.Data()
		if err != nil {
			continue
		}
		for len(b) >= 12 {
			nsz := int(ef.ByteOrder.Uint32(b))
			dsz := int(ef.ByteOrder.Uint32(b[4:]))
			typ := ef.ByteOrder.Uint32(b[8:])
			b = b[12:]
			na, da := (nsz+3)&^3, (dsz+3)&^3
			if nsz < 0 || dsz < 0 || na > len(b) || da > len(b)-na {
				break
			}
			if typ == 3 && nsz == 4 && string(b[:3]) == "GNU" {
				return hex.EncodeToString(b[na : na+dsz])
			}
			b = b[na+da:]
		}
	}
	return ""
}

// Bias returns what to subtract from an address in a mapping of this file
// (mapped at start from file offset off) to get the file's own address
// (ELF virtual address), and whether a loadable segment covers off.
//
// The loader maps a segment from its offset rounded down to a page, so a
// mapping's offset can lie below its segment's and inside the previous
// one: with lld's layout (libcoreclr.so: the code segment at offset
// 0x1c89a0, address 0x1c99a0) the code mapping starts at offset 0x1c8000,
// still inside the read-only segment before it, whose bias is a page off.
// The segment that starts within the mapping's first page is the one
// mapped there; a mapping in the middle of a segment (split by mprotect)
// falls back to the segment containing its offset.
func (f *File) Bias(start, off uint64) (uint64, bool) {
	for _, s := range f.loads {
		if s.off >= off && s.off-off < pageSize && s.filesz > 0 {
			return start - off + s.off - s.vaddr, true
		}
	}
	for _, s := range f.loads {
		if off >= s.off && off < s.off+max(s.filesz, 1) {
			return start - off + s.off - s.vaddr, true
		}
	}
	return 0, false
}

// pageSize is the mapping granularity of x86-64 Linux.
const pageSize = 4096

// CFI returns the file's call-frame table, parsing it on first use; nil
// when the file has none.
func (f *File) CFI() *unwind.Table {
	if f.cfiOK {
		return f.cfi
	}
	f.cfiOK = true
	ra, c, err := f.open()
	if err != nil {
		f.err = err
		return nil
	}
	defer c.Close()
	safeELF(ra, func(ef *elf.File) error {
		eh := ef.Section(".eh_frame")
		if eh == nil || eh.Type == elf.SHT_NOBITS || eh.Size > maxELFSection {
			return nil
		}
		data, err := eh.Data()
		if err != nil {
			return err
		}
		var hdr []byte
		var hdrAddr uint64
		if h := ef.Section(".eh_frame_hdr"); h != nil && h.Type != elf.SHT_NOBITS && h.Size <= maxELFSection {
			if hdr, err = h.Data(); err == nil {
				hdrAddr = h.Addr
			}
		}
		t, err := unwind.NewTable(data, eh.Addr, hdr, hdrAddr)
		if err != nil {
			f.err = err
			return nil
		}
		f.cfi = t
		return nil
	})
	return f.cfi
}

// Symbol names the function containing vaddr (a file address); ok false
// when no symbol covers it.
func (f *File) Symbol(vaddr uint64) (string, bool) {
	if !f.symsOK {
		f.loadSymbols()
	}
	s := f.syms
	i := sort.Search(len(s), func(i int) bool { return s[i].start > vaddr }) - 1
	if i < 0 || vaddr >= s[i].end {
		return "", false
	}
	return s[i].name, true
}

// SymbolSource says where the symbols came from: "symtab" (the file's
// own), "debug" (a separate debug file), "dynsym" (exported symbols only)
// or "" (none).
func (f *File) SymbolSource() string {
	if !f.symsOK {
		f.loadSymbols()
	}
	return f.symSource
}

func (f *File) loadSymbols() {
	f.symsOK = true
	ra, c, err := f.open()
	if err != nil {
		f.err = err
		return
	}
	defer c.Close()
	var syms []symbol
	var debugLink string
	safeELF(ra, func(ef *elf.File) error {
		if s, err := ef.Symbols(); err == nil && len(s) > 0 {
			syms = appendSyms(syms, s)
			f.symSource = "symtab"
		}
		if f.symSource == "" {
			debugLink = gnuDebugLink(ef)
		}
		if s, err := ef.DynamicSymbols(); err == nil {
			n := len(syms)
			syms = appendSyms(syms, s)
			if f.symSource == "" && len(syms) > n {
				f.symSource = "dynsym"
			}
		}
		return nil
	})
	if f.symSource != "symtab" {
		if dbg := f.debugFile(debugLink); dbg != "" {
			if fh, err := procfs.OpenRegular(dbg, 0); err == nil {
				n := len(syms)
				safeELF(fh, func(ef *elf.File) error {
					if s, err := ef.Symbols(); err == nil {
						syms = appendSyms(syms, s)
					}
					return nil
				})
				fh.Close()
				if len(syms) > n {
					f.symSource = "debug"
				}
			}
		}
	}
	f.syms = finishSyms(syms)
}

// debugFile finds the separate debug file: by build id, then by the
// .gnu_debuglink name, under the target's root first, then the host's.
func (f *File) debugFile(link string) string {
	var cands []string
	roots := []string{f.rootFS}
	if f.rootFS != "" {
		roots = append(roots, "")
	}
	for _, root := range roots {
		if len(f.BuildID) > 2 {
			cands = append(cands, filepath.Join(root, "/usr/lib/debug/.build-id", f.BuildID[:2], f.BuildID[2:]+".debug"))
		}
		if link != "" && !strings.Contains(link, "/") {
			dir := filepath.Dir(f.Path)
			cands = append(cands, filepath.Join(root, "/usr/lib/debug", dir, link), filepath.Join(root, dir, ".debug", link))
		}
	}
	for _, c := range cands {
		if st, err := os.Stat(c); err == nil && st.Mode().IsRegular() {
			return c
		}
	}
	return ""
}

func gnuDebugLink(ef *elf.File) string {
	s := ef.Section(".gnu_debuglink")
	if s == nil || s.Size > 4096 {
		return ""
	}
	b, err := s.Data()
	if err != nil {
		return ""
	}
	if i := bytes.IndexByte(b, 0); i > 0 {
		return string(b[:i])
	}
	return ""
}

func appendSyms(out []symbol, in []elf.Symbol) []symbol {
	for i := range in {
		s := &in[i]
		typ := elf.ST_TYPE(s.Info)
		if (typ != elf.STT_FUNC && typ != elf.STT_GNU_IFUNC) || s.Value == 0 || s.Section == elf.SHN_UNDEF {
			continue
		}
		name := s.Name
		if i := strings.IndexByte(name, '@'); i > 0 {
			name = name[:i] // version suffix of dynamic symbols
		}
		var rank uint8
		switch elf.ST_BIND(s.Info) {
		case elf.STB_GLOBAL:
		case elf.STB_WEAK:
			rank = 1
		default:
			rank = 2
		}
		// Among aliases prefer the public spelling: fewer leading
		// underscores first.
		rank += 3 * uint8(min(len(name)-len(strings.TrimLeft(name, "_")), 3))
		out = append(out, symbol{start: s.Value, end: s.Value + s.Size, name: name, rank: rank})
	}
	return out
}

// finishSyms sorts symbols, keeps one name per address (the best-ranked
// alias), and gives zero-sized symbols the room up to the next one.
func finishSyms(s []symbol) []symbol {
	sort.Slice(s, func(i, j int) bool {
		if s[i].start != s[j].start {
			return s[i].start < s[j].start
		}
		if s[i].rank != s[j].rank {
			return s[i].rank < s[j].rank
		}
		if s[i].end != s[j].end {
			return s[i].end > s[j].end
		}
		return s[i].name < s[j].name
	})
	out := s[:0]
	for _, x := range s {
		if n := len(out); n > 0 && out[n-1].start == x.start {
			out[n-1].end = max(out[n-1].end, x.end)
			continue
		}
		out = append(out, x)
	}
	for i := range out {
		if out[i].end == out[i].start {
			if i+1 < len(out) {
				out[i].end = out[i+1].start
			} else {
				out[i].end = out[i].start + 1
			}
		}
	}
	return out
}

// Err is why the file's symbols or CFI could not be read, if they could
// not.
func (f *File) Err() error { return f.err }
