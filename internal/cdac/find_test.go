package cdac

import (
	"debug/elf"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/internal/procfs"
)

// installedCoreCLR is the newest libcoreclr.so of the dotnet on PATH.
func installedCoreCLR(t *testing.T) string {
	t.Helper()
	dotnet, err := exec.LookPath("dotnet")
	if err != nil {
		t.Fatal("dotnet is not on PATH")
	}
	if r, err := filepath.EvalSymlinks(dotnet); err == nil {
		dotnet = r
	}
	libs, _ := filepath.Glob(filepath.Join(filepath.Dir(dotnet), "shared", "Microsoft.NETCore.App", "*", "libcoreclr.so"))
	if len(libs) == 0 {
		t.Fatalf("no libcoreclr.so under %s", filepath.Dir(dotnet))
	}
	return libs[len(libs)-1]
}

// TestFindRuntime: the installed runtime's libcoreclr.so, mapped at a
// base, exports the descriptor at base + its .dynsym value, and its
// version comes from its directory; a library of a version before 9
// without the symbol is ErrNoDescriptor saying the version; a process
// without libcoreclr is an error saying so.
func TestFindRuntime(t *testing.T) {
	lib := installedCoreCLR(t)
	f, err := elf.Open(lib)
	if err != nil {
		t.Fatal(err)
	}
	syms, _ := f.DynamicSymbols()
	f.Close()
	var value uint64
	for _, s := range syms {
		if s.Name == SymbolName {
			value = s.Value
		}
	}
	if value == 0 {
		t.Fatalf("%s exports no %s", lib, SymbolName)
	}
	const base = 0x7f1234560000
	maps := []procfs.Mapping{
		{Start: base + 0x200000, End: base + 0x300000, Offset: 0x1f0000, Perms: "r-xp", Inode: 1, Path: lib},
		{Start: base, End: base + 0x100000, Offset: 0, Perms: "r--p", Inode: 1, Path: lib},
	}
	rt, err := findIn(maps, "")
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Base(filepath.Dir(lib))
	if rt.Base != base || rt.Symbol != base+value || rt.Version != want {
		t.Errorf("runtime %+v, want base %#x, symbol %#x, version %s", rt, uint64(base), base+value, want)
	}

	// A .NET 8 runtime: an ELF library without the symbol.
	root := t.TempDir()
	old := "/usr/share/dotnet/shared/Microsoft.NETCore.App/8.0.11/libcoreclr.so"
	b, err := os.ReadFile("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Dir(root+old), 0o755)
	if err := os.WriteFile(root+old, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = findIn([]procfs.Mapping{{Start: base, End: base + 0x1000, Perms: "r--p", Inode: 1, Path: old}}, root)
	if !errors.Is(err, ErrNoDescriptor) || !strings.Contains(err.Error(), ".NET 8.0.11: the runtime exports it from .NET 9 on") {
		t.Errorf(".NET 8: %v", err)
	}
	if _, err := findIn([]procfs.Mapping{{Start: base, End: base + 0x1000, Path: "/usr/lib/libc.so.6"}}, ""); err == nil || !strings.Contains(err.Error(), "no libcoreclr.so") {
		t.Errorf("no runtime: %v", err)
	}
}
