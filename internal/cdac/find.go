package cdac

import (
	"debug/elf"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/clrspy/clrspy/internal/procfs"
)

// ErrNoDescriptor: the runtime exports no contract descriptor (.NET 8
// and earlier, or a runtime built without it).
var ErrNoDescriptor = errors.New("no data contract descriptor")

// Runtime is the libcoreclr.so a process maps and where its descriptor is.
type Runtime struct {
	Path    string // as the process maps it
	Version string // from the path (".../Microsoft.NETCore.App/10.0.12/..."), "" unknown
	Base    uint64 // the load base
	Symbol  uint64 // the descriptor's address, 0 when not exported
}

var versionDir = regexp.MustCompile(`/(\d+\.\d+\.\d+[^/]*)/libcoreclr\.so$`)

// FindRuntime locates libcoreclr.so in pid's mappings and the descriptor
// symbol in its .dynsym (the file read through /proc/PID/root). A runtime
// without the symbol is returned with Symbol 0 and ErrNoDescriptor.
func FindRuntime(pid int) (*Runtime, error) {
	b, err := procfs.MapsText(pid)
	if err != nil {
		return nil, err
	}
	return findIn(procfs.ParseMaps(b), procfs.Root(pid))
}

func findIn(maps []procfs.Mapping, root string) (*Runtime, error) {
	var lib *procfs.Mapping
	for i := range maps {
		m := &maps[i]
		if filepath.Base(m.Path) == "libcoreclr.so" && m.Offset == 0 && (lib == nil || m.Start < lib.Start) {
			lib = m
		}
	}
	if lib == nil {
		return nil, errors.New("the process maps no libcoreclr.so (not a CoreCLR process, or a NativeAOT one)")
	}
	rt := &Runtime{Path: lib.Path}
	if m := versionDir.FindStringSubmatch(lib.Path); m != nil {
		rt.Version = m[1]
	}
	f, err := elf.Open(root + lib.Path)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", lib.Path, err)
	}
	defer f.Close()
	var first *elf.Prog
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Off == 0 {
			first = p
			break
		}
	}
	if first == nil {
		return nil, fmt.Errorf("%s: no PT_LOAD at file offset 0", lib.Path)
	}
	rt.Base = lib.Start - (first.Vaddr &^ 0xfff)
	syms, err := f.DynamicSymbols()
	if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
		return nil, fmt.Errorf("%s: %v", lib.Path, err)
	}
	for _, s := range syms {
		if s.Name == SymbolName {
			rt.Symbol = rt.Base + s.Value
			return rt, nil
		}
	}
	return rt, fmt.Errorf("%w: %s exports no %s (%s)", ErrNoDescriptor, lib.Path, SymbolName, rt.why())
}

// why is why a runtime has no descriptor.
func (r *Runtime) why() string {
	if maj, _, ok := strings.Cut(r.Version, "."); ok && maj != "" && len(maj) <= 2 {
		if maj < "9" && len(maj) == 1 {
			return ".NET " + r.Version + ": the runtime exports it from .NET 9 on"
		}
		return ".NET " + r.Version
	}
	return "the runtime exports it from .NET 9 on"
}
