package analysis_test

import (
	"errors"
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/clrspy/clrspy/"

// TestLayers checks the import graph's rules of docs/ARCHITECTURE.md on
// every package's non-test imports (go/build, no go command): data flows
// one way, so an analysis opens no stream and renders nothing, the
// outputs (report) render results from any stream and speak to no
// runtime, and no library package (outside internal/ and cmd/) depends on
// clrspy's own live views, daemon and recorder.
func TestLayers(t *testing.T) {
	imports := moduleImports(t)
	app := []string{"internal/serve", "internal/web", "internal/tui", "internal/top", "internal/monitor", "internal/metrics", "internal/flightrec"}
	rules := []struct {
		pkgs   []string
		not    []string
		reason string
	}{
		{[]string{"report"}, []string{"ipc", "source"}, "report renders results; sessions and streams are its callers'"},
		{[]string{"analysis", "gcpause", "heap", "locks", "stacks", "exceptions", "threadpool", "counters", "runinfo", "heapgraph", "triage"},
			append([]string{"source", "report", "perf"}, app...), "analyses are state machines over events, fed by their callers"},
	}
	for _, r := range rules {
		for _, p := range r.pkgs {
			got, ok := imports[p]
			if !ok {
				t.Errorf("package %s not found", p)
			}
			for _, bad := range r.not {
				if slices.Contains(got, bad) {
					t.Errorf("%s imports %s: %s", p, bad, r.reason)
				}
			}
		}
	}
	if len(imports) < 25 {
		t.Fatalf("read %d packages: the walk missed the module", len(imports))
	}
	for p, got := range imports {
		if strings.HasPrefix(p, "internal/") || strings.HasPrefix(p, "cmd/") || strings.HasPrefix(p, "scripts/") {
			continue
		}
		for _, bad := range app {
			if slices.Contains(got, bad) {
				t.Errorf("library package %s imports %s (clrspy's own, not library)", p, bad)
			}
		}
	}
}

// moduleImports maps each package directory of the module (relative to
// its root) to the module packages it imports, without tests.
func moduleImports(t *testing.T) map[string][]string {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if n := d.Name(); path != root && (n == "testdata" || strings.HasPrefix(n, ".")) {
			return filepath.SkipDir
		}
		pkg, err := build.Default.ImportDir(path, 0)
		var noGo *build.NoGoError
		if errors.As(err, &noGo) {
			return nil
		} else if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		var mine []string
		for _, imp := range pkg.Imports {
			if p, ok := strings.CutPrefix(imp, module); ok {
				mine = append(mine, p)
			}
		}
		out[filepath.ToSlash(rel)] = mine
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
