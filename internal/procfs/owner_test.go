package procfs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// procAllowed are the production files that may still name a /proc path
// of their own, and why: paths only opened through (a directory's fd, a
// socket's name), kernel settings rather than a process's files, and two
// files another step of issue 35 rewrites.
var procAllowed = map[string]string{
	"ipc/discover.go":             "/proc/self/fd/N/NAME names a socket through its directory's fd (sun_path is short)",
	"ipc/reverseserver.go":        "/proc/self/fd/N/NAME, as ipc/discover.go",
	"internal/outfile/outfile.go": "/proc/self/fd/ is a destination path it recognises, not read",
	"perf/perm.go":                "/proc/sys/kernel/perf_event_paranoid: a kernel setting (a variable for tests)",
	"perf/sampler.go":             "/proc/sys/kernel/perf_event_mlock_kb: a kernel setting",
	"perf/builder.go":             "thread names and kallsyms: the suspension-pairing step rewrites the builder",
	"heapgraph/mem_linux.go":      "meminfo and statm of clrspy's own memory budget: the heapgraph step's",
}

// TestOnlyProcfsReadsProc: /proc is read through this package. A
// production file elsewhere that names a /proc path (a string literal
// starting with "/proc") is listed in procAllowed with its reason, or
// fails here.
func TestOnlyProcfsReadsProc(t *testing.T) {
	root := filepath.Join("..", "..")
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			switch {
			case rel == "internal/procfs", d.Name() == "testdata", rel != "." && strings.HasPrefix(d.Name(), "."), rel == "scripts":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			if s, err := strconv.Unquote(lit.Value); err == nil && strings.HasPrefix(s, "/proc") {
				if _, ok := procAllowed[rel]; !ok {
					t.Errorf("%s names %q: read it through internal/procfs", rel, s)
				}
				seen[rel] = true
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for f := range procAllowed {
		if !seen[f] {
			t.Errorf("%s is allowed to name /proc paths but names none: drop it from procAllowed", f)
		}
	}
}
