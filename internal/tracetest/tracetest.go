// Package tracetest is the test harness for code that reads traces: where
// the fixtures are (the traces clrspy recorded from the project's own
// workload, in testdata/traces), where the compatibility suite is (third-
// party traces outside the repository), one read loop, the workloads' own
// reports, and golden files with an -update flag and a diff on mismatch.
//
// The package does not import nettrace (nettrace's own tests use it too):
// Open and ReadAll take the reader's constructor and Next method.
//
// Fixture tests need nothing outside the repository. Tests of the
// compatibility suite live in files built with the "compat" tag
// (go test -tags compat, make compat); CompatPath fails such a test, naming
// the directory it looked in, when the suite is absent.
package tracetest

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/clrspy/clrspy/internal/workload"
)

// CompatEnv names the directory of the compatibility suite; unset, it is
// ../shared/traces beside the repository.
const CompatEnv = "CLRSPY_COMPAT_TRACES"

var (
	rootOnce sync.Once
	root     string
	rootErr  error
)

// repoRoot is the module root (the directory holding go.mod above the
// test's working directory).
func repoRoot(tb testing.TB) string {
	tb.Helper()
	rootOnce.Do(func() { root, rootErr = workload.RepoRoot() })
	if rootErr != nil {
		tb.Fatalf("tracetest: %v", rootErr)
	}
	return root
}

// Path is the path of testdata/traces/NAME; it fails the test if the file
// does not exist.
func Path(tb testing.TB, name string) string {
	tb.Helper()
	p := filepath.Join(repoRoot(tb), "testdata", "traces", name)
	if _, err := os.Stat(p); err != nil {
		tb.Fatalf("fixture trace: %v", err)
	}
	return p
}

// Fixtures lists the traces of testdata/traces (file names, sorted).
func Fixtures(tb testing.TB) []string {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot(tb), "testdata", "traces", "*.nettrace"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no fixture traces in testdata/traces (%v)", err)
	}
	for i, f := range files {
		files[i] = filepath.Base(f)
	}
	return files
}

// CompatDir is the directory of the compatibility suite: $CLRSPY_COMPAT_TRACES,
// or ../shared/traces beside the repository. It fails the test, naming the
// directory, when that is not a directory.
func CompatDir(tb testing.TB) string {
	tb.Helper()
	dir := os.Getenv(CompatEnv)
	if dir == "" {
		dir = filepath.Join(repoRoot(tb), "..", "shared", "traces")
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		tb.Fatalf("compatibility suite not found at %s: set %s to its directory, or leave -tags compat out to run the fixture tests alone", dir, CompatEnv)
	}
	return dir
}

// CompatPath is the path of NAME in the compatibility suite; it fails the
// test if the file does not exist.
func CompatPath(tb testing.TB, name string) string {
	tb.Helper()
	p := filepath.Join(CompatDir(tb), name)
	if _, err := os.Stat(p); err != nil {
		tb.Fatalf("compatibility trace: %v", err)
	}
	return p
}

// Open opens testdata/traces/NAME with newReader (nettrace.NewReader); the
// file is closed when the test ends.
func Open[R any](tb testing.TB, name string, newReader func(io.Reader) (R, error)) R {
	tb.Helper()
	return OpenFile(tb, Path(tb, name), newReader)
}

// OpenCompat opens NAME of the compatibility suite with newReader.
func OpenCompat[R any](tb testing.TB, name string, newReader func(io.Reader) (R, error)) R {
	tb.Helper()
	return OpenFile(tb, CompatPath(tb, name), newReader)
}

// OpenFile opens the trace at path with newReader; the file is closed when
// the test ends.
func OpenFile[R any](tb testing.TB, path string, newReader func(io.Reader) (R, error)) R {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { f.Close() })
	r, err := newReader(f)
	if err != nil {
		tb.Fatalf("%s: %v", filepath.Base(path), err)
	}
	return r
}

// Stream is what ReadAll reads: *nettrace.Reader is one.
type Stream[E any] interface {
	Next() (E, error)
}

// ReadAll calls fn (if not nil) with every event of r until Next fails. It
// returns nil at a clean end (io.EOF); otherwise the error that ended the
// stream, wrapped with the number of events delivered before it (errors.Is
// and errors.As still see it: a cut trace's *nettrace.TruncatedError). The
// caller asserts how its trace must end.
func ReadAll[E any](tb testing.TB, r Stream[E], fn func(E)) error {
	tb.Helper()
	n := 0
	for {
		ev, err := r.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("after %d events: %w", n, err)
		}
		n++
		if fn != nil {
			fn(ev)
		}
	}
}

// Workload is the exit report of the workload run that NAME was recorded
// from (testdata/traces/NAME without its extension, plus .workload.json):
// what the runtime said about itself (GC.CollectionCount, pauses,
// GCMemoryInfo) and the mode's own measurements.
func Workload(tb testing.TB, name string) *workload.Result {
	tb.Helper()
	base := name
	if ext := filepath.Ext(base); ext == ".nettrace" {
		base = base[:len(base)-len(ext)]
	}
	data, err := os.ReadFile(Path(tb, base+".workload.json"))
	if err != nil {
		tb.Fatal(err)
	}
	res, err := workload.ParseResult(data)
	if err != nil {
		tb.Fatalf("%s: %v", base+".workload.json", err)
	}
	return res
}

// GCsByGeneration turns the runtime's GC.CollectionCount(0..2) (collections
// of that generation or older) into the number of GCs of each generation.
func GCsByGeneration(w *workload.Result) [3]int {
	return [3]int{w.Gen0 - w.Gen1, w.Gen1 - w.Gen2, w.Gen2}
}
