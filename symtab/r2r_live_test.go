package symtab

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/clrspy/clrspy/clrmeta"
	"github.com/clrspy/clrspy/internal/workload"
)

// TestSymbolizeR2RLive: in a live process, an address inside CoreLib's
// precompiled UTF-8 transcoder (placed from the file's own ReadyToRun
// tables through the runtime's mapping of the file) symbolizes to the
// method, and the process's memory there holds the file's bytes: the
// runtime maps each section at its file offset, which Symbolize relies on.
func TestSymbolizeR2RLive(t *testing.T) {
	w := workload.Start(t, nil, "framework", "seconds=30")
	p, err := NewProcess(w.Pid)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var lib string
	for _, m := range p.maps {
		if filepath.Base(m.Path) == "System.Private.CoreLib.dll" {
			lib = m.Path
		}
	}
	if lib == "" {
		t.Fatal("no executable mapping of System.Private.CoreLib.dll")
	}
	r2r, err := clrmeta.OpenR2RMethods(lib)
	if err != nil {
		t.Fatal(err)
	}
	const name = "System.Text.Unicode.Utf8Utility.TranscodeToUtf8(wchar*,int32,unsigned int8*,int32,wchar*&,unsigned int8*&)"
	start, end, ok := r2r.Body(name)
	if !ok {
		t.Fatalf("CoreLib has no ReadyToRun body %s", name)
	}
	rva := start + (end-start)/2
	off, ok := r2r.FileOffset(rva)
	if !ok {
		t.Fatalf("RVA %#x in no section", rva)
	}
	var addr uint64
	for _, m := range p.maps {
		if m.Path == lib && off >= m.Offset && off < m.Offset+(m.End-m.Start) {
			addr = m.Start + off - m.Offset
		}
	}
	if addr == 0 {
		t.Fatalf("file offset %#x of %s is in no executable mapping", off, lib)
	}
	sym := p.Symbolize(addr)
	if sym.Kind != KindImage || sym.Name != name || sym.Module != "System.Private.CoreLib.dll" || sym.Offset != off {
		t.Errorf("Symbolize(%#x) = %+v, want %s in System.Private.CoreLib.dll at %#x", addr, sym, name, off)
	}
	mem, err := os.Open(filepath.Join("/proc", strconv.Itoa(w.Pid), "mem"))
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	got, want := make([]byte, 64), make([]byte, 64)
	if _, err := mem.ReadAt(got, int64(addr)); err != nil {
		t.Fatalf("reading the process's code: %v", err)
	}
	f, err := os.Open(lib)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.ReadAt(want, int64(off)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("memory at %#x is not the file's bytes at %#x:\n% x\n% x", addr, off, got, want)
	}
	// An address in the image's headers (no method) keeps module+offset.
	for _, m := range p.maps {
		if m.Path == lib && m.Offset == 0 {
			if s := p.Symbolize(m.Start); s.Kind != KindImage || s.Name != "" {
				t.Errorf("Symbolize(image start %#x) = %+v, want an unnamed image address", m.Start, s)
			}
		}
	}
}
