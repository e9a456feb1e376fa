package tracetest

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDiff(t *testing.T) {
	a := "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n"
	b := "one\ntwo\nTHREE\nfour\nfive\nsix\nseven\neight\nnine\nten\neleven\n"
	want := `--- want
+++ got
@@ -1,6 +1,6 @@
 one
 two
-three
+THREE
 four
 five
 six
@@ -8,3 +8,4 @@
 eight
 nine
 ten
+eleven
`
	if got := Diff("want", "got", a, b); got != want {
		t.Errorf("diff:\n%s\nwant:\n%s", got, want)
	}
	if got := Diff("a", "b", a, a); got != "" {
		t.Errorf("equal inputs: %q", got)
	}
	// A lost final newline is visible.
	if got := Diff("a", "b", "x\n", "x"); !strings.Contains(got, "-x\n+x\n\\ No newline at end of file") {
		t.Errorf("final newline: %q", got)
	}
	// Adding to an empty file.
	if got := Diff("a", "b", "", "x\n"); got != "--- a\n+++ b\n@@ -0,0 +1 @@\n+x\n" {
		t.Errorf("from empty: %q", got)
	}
}

func TestDiffLimit(t *testing.T) {
	var a, b strings.Builder
	for i := range 5000 {
		a.WriteString(strings.Repeat("a", i%7) + "\n")
		b.WriteString(strings.Repeat("b", i%5) + "\n")
	}
	got := Diff("a", "b", a.String(), b.String())
	if n := strings.Count(got, "\n"); n > maxDiffLines+5 || !strings.HasSuffix(got, "(diff cut at 200 lines)\n") {
		t.Errorf("%d lines, ends %q", n, got[len(got)-40:])
	}
}

type fakeStream struct {
	n   int
	end error
}

func (s *fakeStream) Next() (int, error) {
	if s.n == 0 {
		return 0, s.end
	}
	s.n--
	return s.n, nil
}

func TestReadAll(t *testing.T) {
	var got []int
	if err := ReadAll(t, &fakeStream{3, io.EOF}, func(v int) { got = append(got, v) }); err != nil || len(got) != 3 || got[0] != 2 {
		t.Errorf("clean end: %v %v", err, got)
	}
	cut := errors.New("cut")
	err := ReadAll(t, &fakeStream{2, cut}, nil)
	if !errors.Is(err, cut) || err.Error() != "after 2 events: cut" {
		t.Errorf("cut end: %v", err)
	}
}

func TestWorkloadAndPaths(t *testing.T) {
	w := Workload(t, "gc-wks.nettrace")
	if w.Mode != "churn" || w.Gen0 == 0 || w.Gen0 < w.Gen1 || w.Gen1 < w.Gen2 {
		t.Errorf("gc-wks workload %+v", w)
	}
	g := GCsByGeneration(w)
	if g[0]+g[1]+g[2] != w.Gen0 {
		t.Errorf("by generation %v, %d GCs", g, w.Gen0)
	}
	fs := Fixtures(t)
	if len(fs) < 8 || !strings.HasSuffix(fs[0], ".nettrace") {
		t.Errorf("fixtures %v", fs)
	}
	for _, f := range fs {
		if _, err := os.Stat(Path(t, f)); err != nil {
			t.Error(err)
		}
	}
}

func TestCompatDirFromEnv(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "x.nettrace"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(CompatEnv, dir)
	if got := CompatPath(t, "x.nettrace"); got != filepath.Join(dir, "x.nettrace") {
		t.Errorf("CompatPath = %s", got)
	}
}
