package symtab

import (
	"sort"
	"strconv"
	"strings"
)

// PerfMap is a /tmp/perf-PID.map: one "START SIZE NAME" line (hex, no 0x)
// per piece of JIT'd code, as the .NET runtime writes it with
// DOTNET_PerfMapEnabled or the diagnostics IPC's EnablePerfMap.
type PerfMap struct {
	syms []symbol
}

// ParsePerfMap reads a perf map. Later lines for the same start win (code
// re-jitted at a reused address); malformed lines are skipped.
func ParsePerfMap(b []byte) *PerfMap {
	m := &PerfMap{}
	eachLine(b, func(line string) {
		a, rest, ok := strings.Cut(line, " ")
		if !ok {
			return
		}
		sz, name, ok := strings.Cut(rest, " ")
		if !ok || name == "" {
			return
		}
		start, err1 := strconv.ParseUint(strings.TrimPrefix(a, "0x"), 16, 64)
		size, err2 := strconv.ParseUint(strings.TrimPrefix(sz, "0x"), 16, 64)
		if err1 != nil || err2 != nil || size == 0 || start+size < start {
			return
		}
		m.syms = append(m.syms, symbol{start: start, end: start + size, name: name})
	})
	m.syms = byStart(m.syms, true)
	return m
}

// Len is the number of entries.
func (m *PerfMap) Len() int {
	if m == nil {
		return 0
	}
	return len(m.syms)
}

// Lookup names the code at addr.
func (m *PerfMap) Lookup(addr uint64) (string, bool) {
	if m == nil {
		return "", false
	}
	s := m.syms
	i := sort.Search(len(s), func(i int) bool { return s[i].start > addr }) - 1
	// Entries may nest (a stub inside a larger region): look back a little.
	for k := i; k >= 0 && k > i-4; k-- {
		if addr < s[k].end {
			return s[k].name, true
		}
	}
	return "", false
}
