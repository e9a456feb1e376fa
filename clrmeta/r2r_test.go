package clrmeta

import (
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/internal/workload"
)

func coreLib(t *testing.T) string {
	t.Helper()
	dotnet, err := exec.LookPath("dotnet")
	if err != nil {
		t.Fatal("dotnet is not on PATH")
	}
	if r, err := filepath.EvalSymlinks(dotnet); err == nil {
		dotnet = r
	}
	libs, _ := filepath.Glob(filepath.Join(filepath.Dir(dotnet), "shared", "Microsoft.NETCore.App", "*", "System.Private.CoreLib.dll"))
	if len(libs) == 0 {
		t.Fatalf("no System.Private.CoreLib.dll under %s", filepath.Dir(dotnet))
	}
	return libs[len(libs)-1]
}

// TestR2RMethodsCoreLib names the runtime's CoreLib's precompiled code
// from the file alone: known methods have bodies, an address inside one
// (as an RVA and as a file offset, which a mapping gives) resolves to its
// name, and the bodies are ordered and disjoint.
func TestR2RMethodsCoreLib(t *testing.T) {
	m, err := OpenR2RMethods(coreLib(t))
	if err != nil {
		t.Fatal(err)
	}
	if m.Len() < 10000 {
		t.Fatalf("%d ReadyToRun bodies named in CoreLib, want > 10000", m.Len())
	}
	found := map[string]r2rFunc{}
	for i, f := range m.funcs {
		if f.end <= f.start || (i > 0 && f.start < m.funcs[i-1].end) {
			t.Fatalf("body %d %+v: empty or overlapping %+v", i, f, m.funcs[max(i-1, 0)])
		}
		if _, ok := found[f.name]; !ok {
			found[f.name] = f
		}
	}
	// Named as the runtime's method events name them (measured in a
	// profile of the framework workload).
	for _, name := range []string{"System.SpanHelpers.IndexOf(wchar&,int32,wchar&,int32)",
		"System.Buffer.MemmoveInternal(unsigned int8&,unsigned int8&,unsigned int)",
		"System.String.Replace(class System.String,class System.String)",
		"System.Text.Unicode.Utf8Utility.TranscodeToUtf16(unsigned int8*,int32,wchar*,int32,unsigned int8*&,wchar*&)",
		"System.Text.StringBuilder.ToString()"} {
		f, ok := found[name]
		if !ok {
			t.Errorf("no ReadyToRun body named %s", name)
			continue
		}
		mid := f.start + (f.end-f.start)/2
		if got, ok := m.LookupRVA(mid); !ok || got != name {
			t.Errorf("LookupRVA(%#x) = %q, %v; want %s", mid, got, ok, name)
		}
		off, ok := m.FileOffset(mid)
		if !ok {
			t.Fatalf("RVA %#x in no section", mid)
		}
		if got, ok := m.LookupFileOffset(off); !ok || got != name {
			t.Errorf("LookupFileOffset(%#x) = %q, %v; want %s", off, got, ok, name)
		}
	}
	last := m.funcs[len(m.funcs)-1]
	if got, ok := m.LookupRVA(last.end); ok {
		t.Errorf("LookupRVA past the last body (%#x) = %q", last.end, got)
	}
	if got, ok := m.LookupFileOffset(0); ok {
		t.Errorf("LookupFileOffset(0) (the headers) = %q", got)
	}
}

// TestR2RMethodsNotR2R: an IL-only module (the workload) and a native file
// are one-line errors.
func TestR2RMethodsNotR2R(t *testing.T) {
	exe := workload.Exe(t)
	_, err := OpenR2RMethods(exe + ".dll")
	if err == nil || !strings.Contains(err.Error(), "no ReadyToRun code") {
		t.Errorf("IL-only module: err = %v, want no ReadyToRun code", err)
	}
	_, err = OpenR2RMethods(exe)
	if err == nil || !strings.Contains(err.Error(), "not a PE file") {
		t.Errorf("native file: err = %v, want not a PE file", err)
	}
}

// TestR2RMethodsCorrupt: CoreLib with bytes of its headers, ReadyToRun
// header and method tables overwritten, or cut short, reads or fails
// with an error, never a panic.
func TestR2RMethodsCorrupt(t *testing.T) {
	data, err := os.ReadFile(coreLib(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ReadR2RMethods(bytes.NewReader(data), int64(len(data))); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	buf := data // mutated in place, restored after each round
	for i := range 80 {
		var at []int
		// The first 4 KB (PE and CLI headers) or anywhere.
		for range 1 + rng.IntN(8) {
			a := rng.IntN(4096)
			if i%2 == 1 {
				a = rng.IntN(len(buf))
			}
			at = append(at, a)
		}
		saved := make([]byte, len(at))
		for k, a := range at {
			saved[k] = buf[a]
			buf[a] = byte(rng.Uint32())
		}
		n := len(buf)
		if i%5 == 0 {
			n = rng.IntN(len(buf))
		}
		m, err := ReadR2RMethods(bytes.NewReader(buf[:n]), int64(n))
		if err == nil {
			m.LookupFileOffset(uint64(rng.IntN(len(buf))))
		} else if strings.Contains(err.Error(), "\n") {
			t.Errorf("a multi-line error: %q", err)
		}
		for k := len(at) - 1; k >= 0; k-- {
			buf[at[k]] = saved[k]
		}
	}
}
