package analysis_test

import (
	"errors"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
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
// clrspy's own live views, daemon and recorder; the jobs the commands and
// serve share (capture, internal/stacksnap) import neither.
func TestLayers(t *testing.T) {
	imports := moduleImports(t)
	app := []string{"internal/serve", "internal/fleet", "internal/web", "internal/tui", "internal/top", "internal/monitor", "internal/metrics", "internal/flightrec"}
	rules := []struct {
		pkgs   []string
		not    []string
		reason string
	}{
		{[]string{"report"}, []string{"ipc", "source", "pageset"}, "report renders results; sessions, streams and the analyses' composition are its callers'"},
		{[]string{"pageset"}, append([]string{"ipc", "source", "perf"}, app...), "pageset composes the page's analyses; its callers open the stream and feed the Set"},
		{[]string{"analysis", "gcpause", "heap", "locks", "stacks", "exceptions", "threadpool", "counters", "runinfo", "heapgraph", "triage"},
			append([]string{"source", "report", "perf"}, app...), "analyses are state machines over events, fed by their callers"},
		{[]string{"capture", "internal/stacksnap"}, app,
			"the jobs both the commands and serve run take the stream their caller opened: the callers import them, never the other way"},
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
	// Analyses share facts through package analysis (Set, Stopped, Wait,
	// Counters: threadpool reads the queue length through it),
	// never by importing one another; stacks is the symbol table every
	// stack-naming analysis is handed (one a Set, stacks.SymbolsIn).
	// Composers (triage, pageset, the live monitor) import analyses.
	analyses := []string{"gcpause", "heap", "locks", "exceptions", "threadpool", "counters", "runinfo", "heapgraph", "stacks"}
	for _, p := range analyses {
		for _, imp := range imports[p] {
			if imp == "stacks" || imp == p || !slices.Contains(analyses, imp) {
				continue
			}
			t.Errorf("analysis %s imports analysis %s: facts one analysis owns reach another through package analysis", p, imp)
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

// TestReportConsumesNoEvents: report renders results; package pageset
// composes the page's analyses (in an analysis.Set) and hands report their
// results. Checked on report's non-test files: no declaration, parameter
// or expression names nettrace.Event (report holds no event, so it can
// feed none); of package analysis it names only the result types
// (resultTypes), never a Set, Spec, Analyzer or Add (it registers and runs
// no analysis); and it does not import pageset.
func TestReportConsumesNoEvents(t *testing.T) {
	resultTypes := []string{"End", "Stats", "Histogram"}
	if got := moduleImports(t)["report"]; slices.Contains(got, "pageset") {
		t.Errorf("report imports pageset: the page's analyses are composed by report's callers")
	}
	dir, err := filepath.Abs("../report")
	if err != nil {
		t.Fatal(err)
	}
	var analysisRefs int
	checked := inspect(t, dir, func(fset *token.FileSet, n ast.Node) {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return
		}
		x, ok := sel.X.(*ast.Ident)
		if !ok {
			return
		}
		switch {
		case x.Name == "nettrace" && sel.Sel.Name == "Event":
			t.Errorf("%s: report names nettrace.Event: report consumes no events", fset.Position(sel.Pos()))
		case x.Name == "analysis" && !slices.Contains(resultTypes, sel.Sel.Name):
			t.Errorf("%s: report uses analysis.%s: report runs no analysis, it renders their results", fset.Position(sel.Pos()), sel.Sel.Name)
		case x.Name == "analysis":
			analysisRefs++
		}
	})
	if checked < 10 || analysisRefs == 0 {
		t.Fatalf("checked %d files, %d references to analysis's result types: the walk missed report", checked, analysisRefs)
	}
}

// TestSessionsOpened: sessions are opened by package source (its Open,
// ListenAt and a Runtime's Open, on the ipc client's StartSession), by the
// perf sampler's own (perf.Start, perf.Profile) and by nothing else but
// internal/fleet (the monitored targets' sessions and the jobs' second
// ones, Source.Open) and capture; serve, the live views, the metrics and
// the analyses open none. Checked on the non-test files of every package:
// no call names source.Open, source.ListenAt, perf.Start, perf.Profile or
// a StartSession method. The commands (cmd/) and scripts/ open their
// targets through source themselves for now.
func TestSessionsOpened(t *testing.T) {
	allowed := []string{"source", "ipc", "perf", "internal/fleet", "capture"}
	support := []string{"internal/browsertest", "internal/fuzzcorpus", "internal/hostile", "internal/plant", "internal/tracegen",
		"internal/tracetest", "internal/traceevent", "internal/workload", "internal/readspeed"}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for p := range moduleImports(t) {
		if slices.Contains(allowed, p) || slices.Contains(support, p) || strings.HasPrefix(p, "cmd/") || strings.HasPrefix(p, "scripts/") {
			continue
		}
		checked += inspect(t, filepath.Join(root, p), func(fset *token.FileSet, n ast.Node) {
			call, _ := n.(*ast.CallExpr)
			var sel *ast.SelectorExpr
			if call != nil {
				sel, _ = call.Fun.(*ast.SelectorExpr)
			}
			if sel == nil {
				return
			}
			x, _ := sel.X.(*ast.Ident)
			switch {
			case sel.Sel.Name == "StartSession",
				x != nil && x.Name == "source" && (sel.Sel.Name == "Open" || sel.Sel.Name == "ListenAt"),
				x != nil && x.Name == "perf" && (sel.Sel.Name == "Start" || sel.Sel.Name == "Profile"):
				t.Errorf("%s: package %s opens a session (%s): targets' sessions are internal/fleet's (Source.Open), the jobs' capture's, the streams source's",
					fset.Position(call.Pos()), p, sel.Sel.Name)
			}
		})
	}
	if checked < 100 {
		t.Fatalf("checked %d files: the walk missed the module", checked)
	}
}

// inspect walks every node of the non-test files of dir, and returns how
// many files it read.
func inspect(t *testing.T, dir string, fn func(*token.FileSet, ast.Node)) int {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		n++
		ast.Inspect(f, func(x ast.Node) bool {
			fn(fset, x)
			return true
		})
	}
	return n
}
