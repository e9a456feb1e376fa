package symtab

import (
	"bufio"
	"bytes"
	"sort"
	"strconv"
	"strings"
)

// Kernel is the kernel's text symbols from /proc/kallsyms.
type Kernel struct {
	syms []symbol
}

// ParseKallsyms reads a /proc/kallsyms text, keeping text symbols (types
// t, T, w, W). It returns nil when every address is zero (kptr_restrict or
// perf_event_paranoid hides them from this user).
func ParseKallsyms(b []byte) *Kernel {
	k := &Kernel{}
	eachLine(b, func(line string) {
		if len(line) < 20 {
			return
		}
		a, rest, ok := strings.Cut(line, " ")
		if !ok || len(rest) < 3 || rest[1] != ' ' {
			return
		}
		switch rest[0] {
		case 't', 'T', 'w', 'W':
		default:
			return
		}
		name := rest[2:]
		if i := strings.IndexAny(name, " \t"); i >= 0 {
			name = name[:i] // drop "[module]"
		}
		addr, err := strconv.ParseUint(a, 16, 64)
		if err != nil || addr == 0 {
			return
		}
		k.syms = append(k.syms, symbol{start: addr, name: name})
	})
	if len(k.syms) == 0 {
		return nil
	}
	out := byStart(k.syms, false)
	for i := range out {
		if i+1 < len(out) {
			out[i].end = out[i+1].start
		} else {
			out[i].end = out[i].start + 1<<20
		}
	}
	k.syms = out
	return k
}

// Lookup names the kernel function containing addr.
func (k *Kernel) Lookup(addr uint64) (string, bool) {
	if k == nil {
		return "", false
	}
	s := k.syms
	i := sort.Search(len(s), func(i int) bool { return s[i].start > addr }) - 1
	if i < 0 || addr >= s[i].end {
		return "", false
	}
	return s[i].name, true
}

// eachLine calls f with every line of b (lines up to 1 MiB).
func eachLine(b []byte, f func(line string)) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		f(sc.Text())
	}
}

// byStart sorts syms by start address, stably, and keeps one symbol per
// start: the first listed, or with last the last (a perf map's code
// re-jitted at a reused address).
func byStart(syms []symbol, last bool) []symbol {
	sort.SliceStable(syms, func(i, j int) bool { return syms[i].start < syms[j].start })
	out := syms[:0]
	for _, s := range syms {
		if n := len(out); n > 0 && out[n-1].start == s.start {
			if last {
				out[n-1] = s
			}
			continue
		}
		out = append(out, s)
	}
	return out
}
