package procfs

import (
	"strings"
	"testing"
)

// FuzzProcFiles feeds arbitrary /proc/PID/stat, status and environ
// contents to the parsers discovery trusts (a process chooses its own comm,
// which may hold spaces, parentheses and newlines, and its environment):
// no panic, and what they return is well-formed. Seeds (testdata/fuzz) are
// the real files of processes with hostile names.
func FuzzProcFiles(f *testing.F) {
	f.Add([]byte("1 (a) S 0 1 1 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 42 0 0"), []byte("Uid:\t0\t0\t0\t0\nNSpid:\t7\t1\n"), []byte("TMPDIR=/x\x00DOTNET_EnableDiagnostics=0\x00"))
	f.Fuzz(func(t *testing.T, stat, status, environ []byte) {
		if k, err := ParseStartTicks(stat); err == nil && k < 0 {
			t.Fatalf("start time %d", k)
		}
		if n, ok := ParseNSpid(status); ok && n <= 0 {
			t.Fatalf("NSpid %d", n)
		}
		if uid, ok := ParseEuid(status); ok && (uid < 0 || uid > 1<<32-1) {
			t.Fatalf("uid %d", uid)
		}
		if v, ok := RuntimeSetting(environ, "EnableDiagnostics"); ok && strings.ContainsRune(v, 0) {
			t.Fatalf("value %q spans variables", v)
		}
	})
}
