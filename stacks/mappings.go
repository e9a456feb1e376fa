package stacks

import (
	"fmt"
	"sort"
	"strings"
)

// Mapping is one file-backed range of the target's address space (from
// /proc/PID/maps on a live session). It names addresses no method map
// covers: module+0xOFFSET for managed images (ReadyToRun code the rundown
// did not list), and [native code] for native libraries.
type Mapping struct {
	Start, End uint64
	Offset     uint64 // file offset of Start
	Path       string
}

// native reports whether the mapping is native code (a shared library or
// an executable) rather than a managed image.
func (m *Mapping) native() bool {
	base := m.Path[strings.LastIndexByte(m.Path, '/')+1:]
	return !strings.HasSuffix(base, ".dll") && !strings.HasSuffix(base, ".exe") && !strings.HasSuffix(base, ".r2r")
}

// SetMappings gives the builder the target's file mappings; call it before
// Profile. Overlapping or unsorted input is fine.
func (b *Builder) SetMappings(ms []Mapping) {
	b.maps = append(b.maps[:0], ms...)
	sort.Slice(b.maps, func(i, j int) bool { return b.maps[i].Start < b.maps[j].Start })
}

func (b *Builder) mapping(addr uint64) *Mapping {
	i := sort.Search(len(b.maps), func(i int) bool { return b.maps[i].Start > addr }) - 1
	if i >= 0 && addr < b.maps[i].End {
		return &b.maps[i]
	}
	return nil
}

// ParseProcMaps reads the file-backed ranges of a /proc/PID/maps text.
// Lines it cannot read are skipped.
func ParseProcMaps(text string) []Mapping {
	var out []Mapping
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) < 6 || !strings.HasPrefix(f[5], "/") {
			continue
		}
		var m Mapping
		if _, err := fmt.Sscanf(f[0], "%x-%x", &m.Start, &m.End); err != nil || m.End <= m.Start {
			continue
		}
		if _, err := fmt.Sscanf(f[2], "%x", &m.Offset); err != nil {
			continue
		}
		m.Path = strings.Join(f[5:], " ")
		out = append(out, m)
	}
	return out
}
