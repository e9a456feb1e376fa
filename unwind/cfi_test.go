package unwind

import (
	"bufio"
	"bytes"
	"debug/elf"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// libcPath is the C library of this machine: the tests run the parser on a
// real, large .eh_frame (glibc's, about 200 KB with a few thousand FDEs).
const libcPath = "/lib/x86_64-linux-gnu/libc.so.6"

type sections struct {
	eh, hdr         []byte
	ehAddr, hdrAddr uint64
}

func loadSections(t testing.TB, path string) sections {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer f.Close()
	var s sections
	eh := f.Section(".eh_frame")
	if eh == nil {
		t.Fatalf("%s has no .eh_frame", path)
	}
	s.ehAddr = eh.Addr
	if s.eh, err = eh.Data(); err != nil {
		t.Fatal(err)
	}
	if h := f.Section(".eh_frame_hdr"); h != nil {
		s.hdrAddr = h.Addr
		if s.hdr, err = h.Data(); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// oracleRow is one row of `readelf --debug-dump=frames-interp`.
type oracleRow struct {
	loc, end uint64 // row covers [loc, end)
	cfa      string // "rsp+8", "rbp+16", "exp"
	regs     map[string]string
}

// readelfRows runs binutils' readelf on path and returns every CFI row.
func readelfRows(t *testing.T, path string) []oracleRow {
	t.Helper()
	// readelf exits 1 on this glibc after printing everything (it fails to
	// follow .gnu_debuglink with this option); the output is what counts.
	out, err := exec.Command("readelf", "--debug-dump=frames-interp", path).Output()
	if _, ok := err.(*exec.ExitError); ok && len(out) > 0 {
		err = nil
	}
	if err != nil {
		t.Fatalf("readelf (binutils) is the oracle of this test: %v", err)
	}
	var rows []oracleRow
	var cols []string
	var fdeEnd uint64
	inFDE := false
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	var pending []oracleRow
	flush := func() {
		for i := range pending {
			if i+1 < len(pending) {
				pending[i].end = pending[i+1].loc
			} else {
				pending[i].end = fdeEnd
			}
		}
		for _, r := range pending {
			// A row at the FDE's end (after a noreturn call) covers nothing.
			if r.loc < r.end {
				rows = append(rows, r)
			}
		}
		pending = nil
	}
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		// "r9 (r9)": a register rule names the register twice; keep one
		// field per column.
		g := f[:0]
		for _, x := range f {
			if strings.HasPrefix(x, "(") && len(g) > 0 {
				continue
			}
			g = append(g, x)
		}
		f = g
		switch {
		case len(f) >= 6 && f[3] == "FDE":
			flush()
			pc := strings.TrimPrefix(f[5], "pc=")
			_, hi, _ := strings.Cut(pc, "..")
			fdeEnd, _ = strconv.ParseUint(hi, 16, 64)
			inFDE = true
		case len(f) >= 4 && f[3] == "CIE":
			flush()
			inFDE = false
		case len(f) > 0 && f[0] == "LOC":
			cols = f
		case inFDE && len(f) == len(cols) && len(f) >= 2 && len(f[0]) == 16:
			loc, err := strconv.ParseUint(f[0], 16, 64)
			if err != nil {
				continue
			}
			r := oracleRow{loc: loc, cfa: f[1], regs: map[string]string{}}
			for i := 2; i < len(cols); i++ {
				r.regs[cols[i]] = f[i]
			}
			pending = append(pending, r)
		}
	}
	flush()
	return rows
}

var dwarfNames = [...]string{"rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rip"}

var regNames = map[string]int{"rbx": RegRBX, "rbp": RegRBP, "r12": RegR12, "r13": RegR13, "r14": RegR14, "r15": RegR15, "ra": RegRA}

// checkRow compares our row for pc with readelf's.
func checkRow(t *testing.T, tab *Table, o *oracleRow, pc uint64) bool {
	t.Helper()
	var r Rule
	if !tab.Find(pc, &r) {
		t.Errorf("pc %#x: no row (readelf: CFA %s)", pc, o.cfa)
		return false
	}
	var cfa string
	switch r.CFAReg {
	case cfaExpr, cfaExprPLT:
		cfa = "exp"
	default:
		cfa = fmt.Sprintf("%s%+d", dwarfNames[r.CFAReg], r.CFAOffset)
	}
	if cfa != o.cfa {
		t.Errorf("pc %#x: CFA %s, readelf %s", pc, cfa, o.cfa)
		return false
	}
	for name, want := range o.regs {
		reg, ok := regNames[name]
		if !ok {
			continue
		}
		rr := r.regs[reg]
		var got string
		switch rr.kind {
		case ruleOffset:
			got = "c" + strconv.FormatInt(rr.off, 10)
			if rr.off >= 0 {
				got = "c+" + strconv.FormatInt(rr.off, 10)
			}
		case ruleSame, ruleUndefined:
			got = "u"
			if want == "s" {
				got = "s"
			}
		case ruleExpr:
			got = "exp"
			if strings.HasPrefix(want, "v") {
				got = want
			}
		case ruleValOffset:
			got = "v" + strconv.FormatInt(rr.off, 10)
		case ruleRegister:
			got = "r" + strconv.Itoa(int(rr.reg))
		}
		if got != want {
			t.Errorf("pc %#x: %s rule %s, readelf %s", pc, name, got, want)
			return false
		}
	}
	return true
}

// TestLibcAgainstReadelf interprets every CFI row of glibc and compares it
// with binutils' readelf: the CFA rule and the rules of the return address
// and the callee-saved registers, at each row's first address and its last,
// through .eh_frame_hdr's table and through the index built from
// .eh_frame alone.
func TestLibcAgainstReadelf(t *testing.T) { compareReadelf(t, libcPath) }

// TestCoreclrAgainstReadelf does the same on the .NET runtime's
// libcoreclr.so (C++, built by clang), found next to the dotnet on PATH.
func TestCoreclrAgainstReadelf(t *testing.T) { compareReadelf(t, coreclrPath(t)) }

func coreclrPath(t testing.TB) string {
	t.Helper()
	out, err := exec.Command("dotnet", "--list-runtimes").Output()
	if err != nil {
		t.Fatalf("dotnet --list-runtimes: %v", err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		// Microsoft.NETCore.App 10.0.12 [/usr/share/dotnet/shared/Microsoft.NETCore.App]
		f := strings.Fields(line)
		if len(f) == 3 && f[0] == "Microsoft.NETCore.App" {
			return strings.Trim(f[2], "[]") + "/" + f[1] + "/libcoreclr.so"
		}
	}
	t.Fatalf("no Microsoft.NETCore.App runtime in %q", out)
	return ""
}

func compareReadelf(t *testing.T, path string) {
	s := loadSections(t, path)
	rows := readelfRows(t, path)
	if len(rows) < 5000 {
		t.Fatalf("readelf listed %d rows of %s; expected thousands", len(rows), path)
	}
	withHdr, err := NewTable(s.eh, s.ehAddr, s.hdr, s.hdrAddr)
	if err != nil {
		t.Fatal(err)
	}
	if withHdr.hdr == nil {
		t.Fatalf("%s: .eh_frame_hdr (datarel sdata4 table) was not used", path)
	}
	noHdr, err := NewTable(s.eh, s.ehAddr, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(noHdr.index) < 2000 {
		t.Fatalf("index of %d FDEs", len(noHdr.index))
	}
	bad := 0
	for i := range rows {
		o := &rows[i]
		for _, tab := range []*Table{withHdr, noHdr} {
			for _, pc := range []uint64{o.loc, o.end - 1} {
				if !checkRow(t, tab, o, pc) {
					bad++
				}
			}
		}
		if bad > 20 {
			t.Fatal("too many mismatches")
		}
	}
	t.Logf("%d rows of %s agree with readelf (%d FDEs)", len(rows), path, len(noHdr.index))
}

// TestNoRowOutsideFDEs: addresses before the first FDE, between FDEs and
// past the last have no row.
func TestNoRowOutsideFDEs(t *testing.T) {
	s := loadSections(t, libcPath)
	tab, err := NewTable(s.eh, s.ehAddr, s.hdr, s.hdrAddr)
	if err != nil {
		t.Fatal(err)
	}
	var r Rule
	if tab.Find(0, &r) || tab.Find(^uint64(0)-1, &r) {
		t.Error("row for an address outside every FDE")
	}
	noHdr, _ := NewTable(s.eh, s.ehAddr, nil, 0)
	gaps := 0
	for i := 1; i < len(noHdr.index) && gaps < 50; i++ {
		prev, cur := noHdr.index[i-1], noHdr.index[i]
		if prev.end < cur.start {
			gaps++
			if tab.Find(prev.end, &r) || noHdr.Find(prev.end, &r) {
				t.Errorf("row at %#x, in the gap between FDEs [%#x,%#x) and [%#x,...)", prev.end, prev.start, prev.end, cur.start)
			}
		}
	}
	if gaps == 0 {
		t.Fatal("no gap between FDEs found in glibc")
	}
}

// TestMalformedTables: truncated and corrupted sections are errors or
// rows not found, never panics.
func TestMalformedTables(t *testing.T) {
	if _, err := NewTable(nil, 0, nil, 0); err != ErrNoCFI {
		t.Errorf("empty .eh_frame: %v", err)
	}
	// A CIE whose length runs past the section.
	if _, err := NewTable([]byte{0xff, 0, 0, 0, 0, 0, 0, 0}, 0, nil, 0); err == nil || !strings.Contains(err.Error(), "overruns") {
		t.Errorf("overrunning entry: %v", err)
	}
	// A CIE with version 9.
	bad := []byte{12, 0, 0, 0, 0, 0, 0, 0, 9, 0, 1, 0x78, 16, 0, 0, 0}
	if _, err := NewTable(bad, 0, nil, 0); err == nil || !strings.Contains(err.Error(), "version 9") {
		t.Errorf("version 9: %v", err)
	}
	s := loadSections(t, libcPath)
	for _, n := range []int{3, 100, 1000, len(s.eh) / 2} {
		tab, err := NewTable(s.eh[:n], s.ehAddr, s.hdr, s.hdrAddr)
		if err != nil {
			continue
		}
		var r Rule
		for pc := uint64(0x26000); pc < 0x30000; pc += 0x97 {
			tab.Find(pc, &r)
		}
	}
}
