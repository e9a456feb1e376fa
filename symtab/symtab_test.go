package symtab

import (
	"bufio"
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/unwind"
)

const libcPath = "/lib/x86_64-linux-gnu/libc.so.6"

// nmSymbols runs binutils' nm on path (an oracle) and returns the
// addresses of the names asked for.
func nmSymbols(t *testing.T, path string, names ...string) map[string]uint64 {
	t.Helper()
	out, err := exec.Command("nm", path).Output()
	if err != nil {
		t.Fatalf("nm (binutils) on %s: %v", path, err)
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	got := map[string]uint64{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 3 && want[f[2]] {
			v, _ := strconv.ParseUint(f[0], 16, 64)
			got[f[2]] = v
		}
	}
	return got
}

// TestLibcSymbols: glibc ships without .symtab; its static functions
// (msort_with_tmp, the memset variants, __libc_start_call_main) are named
// from the separate debug file found by build id (Debian's libc6-dbg,
// which this machine has), at the addresses nm reads from that file, and
// exported ones keep their public alias (qsort_r, not __qsort_r).
func TestLibcSymbols(t *testing.T) {
	f, err := OpenFile(libcPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.BuildID) != 40 {
		t.Fatalf("build id %q", f.BuildID)
	}
	debug := "/usr/lib/debug/.build-id/" + f.BuildID[:2] + "/" + f.BuildID[2:] + ".debug"
	if _, err := os.Stat(debug); err != nil {
		t.Fatalf("glibc's debug file (package libc6-dbg) is needed: %v", err)
	}
	names := []string{"msort_with_tmp.part.0", "__memset_avx2_unaligned_erms", "__libc_start_call_main"}
	addrs := nmSymbols(t, debug, names...)
	for _, n := range names {
		a, ok := addrs[n]
		if !ok {
			t.Fatalf("nm does not list %s in %s", n, debug)
		}
		for _, off := range []uint64{0, 1, 7} {
			if got, ok := f.Symbol(a + off); !ok || got != n {
				t.Errorf("Symbol(%#x) = %q %v, want %s", a+off, got, ok, n)
			}
		}
	}
	if f.SymbolSource() != "debug" {
		t.Errorf("symbols from %q, want debug", f.SymbolSource())
	}
	q := nmSymbols(t, debug, "__qsort_r")["__qsort_r"]
	if got, _ := f.Symbol(q + 4); got != "qsort_r" {
		t.Errorf("qsort_r's code is named %q", got)
	}
	// No symbol before the first function.
	if got, ok := f.Symbol(0x10); ok {
		t.Errorf("Symbol(0x10) = %q", got)
	}
	// CFI is there, and the text segment's bias is exact: a mapping of
	// the file offset 0x26000 at 0x7f0000026000 has file addresses equal
	// to the mapped address minus 0x7f0000000000.
	if f.CFI() == nil {
		t.Error("no CFI")
	}
	if b, ok := f.Bias(0x7f0000026000, 0x26000); !ok || b != 0x7f0000000000 {
		t.Errorf("bias %#x %v", b, ok)
	}
	if _, ok := f.Bias(0x7f0000026000, 0x900000); ok {
		t.Error("bias for an offset past every segment")
	}
}

// TestCoreclrExports: libcoreclr.so is linked by lld (its code segment's
// file offset 0x1c89a0 is a page below its address 0x1c99a0) and ships
// without .symtab. Mapped the way the loader maps it (the code mapping
// starts at the offset rounded down to a page, inside the read-only
// segment before it), its addresses resolve to the exported functions at
// the addresses nm -D reads from .dynsym: coreclr_execute_assembly,
// coreclr_initialize, not the runtime's libcoreclr.so+0x... of a
// bias a page off.
func TestCoreclrExports(t *testing.T) {
	paths, _ := filepath.Glob("/usr/share/dotnet/shared/Microsoft.NETCore.App/*/libcoreclr.so")
	if len(paths) == 0 {
		t.Fatal("no libcoreclr.so under /usr/share/dotnet (the .NET runtime is needed)")
	}
	path := paths[len(paths)-1]
	f, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ef, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	const base = 0x7f0000000000
	var text *elf.Prog
	for _, p := range ef.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 {
			text = p
		}
	}
	if text == nil {
		t.Fatal("no executable segment")
	}
	if text.Off == text.Vaddr {
		t.Logf("%s: code segment offset equals its address: the page-off case is not exercised", path)
	}
	start, off := base+text.Vaddr&^0xfff, text.Off&^0xfff
	bias, ok := f.Bias(start, off)
	if !ok || bias != base {
		t.Fatalf("code mapping at %#x (offset %#x): bias %#x %v, want %#x", start, off, bias, ok, uint64(base))
	}
	out, err := exec.Command("nm", "-D", "--defined-only", path).Output()
	if err != nil {
		t.Fatalf("nm -D (binutils): %v", err)
	}
	want := map[string]uint64{}
	for _, l := range strings.Split(string(out), "\n") {
		fs := strings.Fields(l)
		if len(fs) == 3 {
			fs[2], _, _ = strings.Cut(fs[2], "@") // coreclr_initialize@@V1.0
		}
		if len(fs) == 3 && (fs[2] == "coreclr_execute_assembly" || fs[2] == "coreclr_initialize" || fs[2] == "coreclr_shutdown_2") {
			want[fs[2]], _ = strconv.ParseUint(fs[0], 16, 64)
		}
	}
	if len(want) != 3 {
		t.Fatalf("nm -D lists %v", want)
	}
	for name, va := range want {
		// An address in the mapping a little into the function.
		addr := va + 0x10 + bias
		if got, ok := f.Symbol(addr - bias); !ok || got != name {
			t.Errorf("%#x: %q %v, want %s", addr, got, ok, name)
		}
	}
	if src := f.SymbolSource(); src != "dynsym" && src != "debug" {
		t.Errorf("symbol source %q", src)
	}
}

// TestParsePerfMap reads the runtime's perf map format: hex with or
// without 0x, names with spaces; a later entry for the same start wins;
// malformed lines are skipped.
func TestParsePerfMap(t *testing.T) {
	m := ParsePerfMap([]byte(`0x7f0000001000 40 int32 [Workload] Workload.Program::Main(string[])[QuickJitted]
7f0000002000 20 stub<1> AllocateTemporaryEntryPoints<PreJitPrecode>
0x7f0000001000 40 int32 [Workload] Workload.Program::Main(string[])[OptimizedTier1]
not a line
0x7f0000003000 0 zero size
0x7f0000004000 zz bad size
`))
	if m.Len() != 2 {
		t.Fatalf("%d entries", m.Len())
	}
	for _, c := range []struct {
		addr uint64
		name string
	}{
		{0x7f0000001000, "int32 [Workload] Workload.Program::Main(string[])[OptimizedTier1]"},
		{0x7f000000103f, "int32 [Workload] Workload.Program::Main(string[])[OptimizedTier1]"},
		{0x7f0000002010, "stub<1> AllocateTemporaryEntryPoints<PreJitPrecode>"},
		{0x7f0000001040, ""},
		{0x7f0000000fff, ""},
	} {
		if got, _ := m.Lookup(c.addr); got != c.name {
			t.Errorf("Lookup(%#x) = %q, want %q", c.addr, got, c.name)
		}
	}
	var nilMap *PerfMap
	if _, ok := nilMap.Lookup(1); ok || nilMap.Len() != 0 {
		t.Error("nil map")
	}
}

// TestParseKallsyms: text symbols only, module suffixes dropped, a
// hidden table (all zeros) is nil.
func TestParseKallsyms(t *testing.T) {
	k := ParseKallsyms([]byte(`ffffffff81000000 T _stext
ffffffff81000100 t do_syscall_64
ffffffff81000200 D some_data
ffffffff81000300 T __x64_sys_read
ffffffffc0000000 t ext4_read	[ext4]
`))
	for _, c := range []struct {
		addr uint64
		name string
	}{
		{0xffffffff81000150, "do_syscall_64"},
		{0xffffffff81000250, "do_syscall_64"}, // data symbols do not end functions
		{0xffffffff81000300, "__x64_sys_read"},
		{0xffffffffc0000010, "ext4_read"},
	} {
		if got, _ := k.Lookup(c.addr); got != c.name {
			t.Errorf("Lookup(%#x) = %q, want %q", c.addr, got, c.name)
		}
	}
	if ParseKallsyms([]byte("0000000000000000 T _stext\n0000000000000000 t do_syscall_64\n")) != nil {
		t.Error("hidden addresses parsed as a table")
	}
}

// TestNewFileErrors: what is not an x86-64 ELF file is an error.
func TestNewFileErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"text", []byte("MZ this is a PE image")},
		{"truncated", mustRead(t, libcPath)[:100]},
	} {
		if _, err := NewFile(c.name, c.data); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}

func mustRead(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// FuzzFile feeds arbitrary bytes to the ELF reader (debug/elf under a
// recover, symbols, CFI): errors are fine, panics are not. Seeds: this
// machine's /usr/bin/true (whole) and glibc's first 8 KB, and the
// checked-in corpus.
func FuzzFile(f *testing.F) {
	f.Add(mustRead(f, "/usr/bin/true"), uint64(0x1000))
	f.Add(mustRead(f, libcPath)[:8192], uint64(0x27000))
	f.Fuzz(func(t *testing.T, data []byte, addr uint64) {
		file, err := NewFile("fuzz", data)
		if err != nil {
			return
		}
		file.Symbol(addr)
		file.Bias(0x7f0000000000, addr)
		file.CFI().Find(addr, new(unwind.Rule))
	})
}

// FuzzPerfMap: arbitrary perf map text never panics and every entry it
// keeps is found at its start.
func FuzzPerfMap(f *testing.F) {
	f.Add([]byte("0x7f0000001000 40 int32 [Workload] Workload.Program::Main(string[])[QuickJitted]\n7f0000002000 20 stub<1> X\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m := ParsePerfMap(data)
		for _, s := range m.syms {
			if _, ok := m.Lookup(s.start); !ok {
				t.Fatalf("entry at %#x not found", s.start)
			}
		}
	})
}
