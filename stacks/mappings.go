package stacks

import (
	"sort"
	"strings"

	"github.com/clrspy/clrspy/internal/procfs"
)

// Mapping is one file-backed range of the target's address space (from
// /proc/PID/maps on a live session). It names addresses no method map
// covers: in managed images the ReadyToRun method the image namer finds
// there (SetImageNamer), else module+0xOFFSET (code the rundown did not
// list), and [native code] for native libraries.
type Mapping = procfs.Mapping

// native reports whether the mapping is native code (a shared library or
// an executable) rather than a managed image.
func isNative(m *Mapping) bool {
	base := m.Path[strings.LastIndexByte(m.Path, '/')+1:]
	return !strings.HasSuffix(base, ".dll") && !strings.HasSuffix(base, ".exe") && !strings.HasSuffix(base, ".r2r")
}

// SetMappings gives the symbol table the target's file mappings, to name
// addresses no method covers. Overlapping or unsorted input is fine.
// Shared-memory mappings (/memfd:..., /dev/shm/...) are left out: the
// runtime's W^X double mapping puts JIT-compiled code there, which is
// managed code whose method event may simply not have arrived yet, not
// native code.
func (s *Symbols) SetMappings(ms []Mapping) {
	s.maps = s.maps[:0]
	for _, m := range ms {
		if strings.HasPrefix(m.Path, "/memfd:") || strings.HasPrefix(m.Path, "/dev/shm/") {
			continue
		}
		s.maps = append(s.maps, m)
	}
	sort.Slice(s.maps, func(i, j int) bool { return s.maps[i].Start < s.maps[j].Start })
}

// SetImageNamer gives the symbol table a function naming the code at a
// file offset of a managed image (its ReadyToRun method: clrmeta.R2RNamer,
// which reads the file), "" when it cannot; frames it names are managed,
// the others stay module+0xOFFSET. Set it before the stacks are named.
func (s *Symbols) SetImageNamer(f func(path string, off uint64) string) { s.images = f }

// SetImageNamer sets the builder's symbol table's image namer.
func (b *Builder) SetImageNamer(f func(path string, off uint64) string) { b.sym.SetImageNamer(f) }

// SetMappings gives the builder's symbol table the target's file mappings.
func (b *Builder) SetMappings(ms []Mapping) { b.sym.SetMappings(ms) }

func (s *Symbols) mapping(addr uint64) *Mapping {
	i := sort.Search(len(s.maps), func(i int) bool { return s.maps[i].Start > addr }) - 1
	if i >= 0 && addr < s.maps[i].End {
		return &s.maps[i]
	}
	return nil
}

// ParseProcMaps reads the file-backed ranges of a /proc/PID/maps text.
// Lines it cannot read are skipped.
func ParseProcMaps(text string) []Mapping { return procfs.Files(procfs.ParseMaps([]byte(text))) }
