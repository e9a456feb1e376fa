package symtab

import (
	"bufio"
	"bytes"
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
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	seq := 0
	type entry struct {
		symbol
		seq int
	}
	var es []entry
	for sc.Scan() {
		line := sc.Text()
		a, rest, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		sz, name, ok := strings.Cut(rest, " ")
		if !ok || name == "" {
			continue
		}
		start, err1 := strconv.ParseUint(strings.TrimPrefix(a, "0x"), 16, 64)
		size, err2 := strconv.ParseUint(strings.TrimPrefix(sz, "0x"), 16, 64)
		if err1 != nil || err2 != nil || size == 0 || start+size < start {
			continue
		}
		es = append(es, entry{symbol{start: start, end: start + size, name: name}, seq})
		seq++
	}
	sort.SliceStable(es, func(i, j int) bool {
		if es[i].start != es[j].start {
			return es[i].start < es[j].start
		}
		return es[i].seq > es[j].seq
	})
	for _, e := range es {
		if n := len(m.syms); n > 0 && m.syms[n-1].start == e.start {
			continue
		}
		m.syms = append(m.syms, e.symbol)
	}
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
