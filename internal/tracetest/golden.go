package tracetest

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata with what the tests produce (check the diff first)")

// Golden compares got with the golden file testdata/NAME of the package
// under test. On a mismatch it fails the test with a unified diff (golden
// first); with -update it rewrites the file instead.
func Golden(tb testing.TB, name string, got []byte) {
	tb.Helper()
	path := filepath.Join("testdata", filepath.FromSlash(name))
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			tb.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("%v (run the test with -update to create it)", err)
	}
	if !bytes.Equal(want, got) {
		tb.Errorf("output differs from %s (rerun with -update after checking the change):\n%s",
			path, Diff(path, "got", string(want), string(got)))
	}
}

// maxDiffLines bounds the diff a failing test prints.
const maxDiffLines = 200

// maxLCSCells bounds the table of the line matching; beyond it the changed
// middle of the files is shown as removed then added.
const maxLCSCells = 1 << 22

// Diff is a unified diff (three lines of context) from a to b, named
// aName and bName in its header; empty when they are equal.
func Diff(aName, bName, a, b string) string {
	if a == b {
		return ""
	}
	x, y := splitLines(a), splitLines(b)
	ops := diffLines(x, y)
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", aName, bName)
	lines := 0
	for _, h := range hunks(ops, 3) {
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", span(h.aStart, h.aLen), span(h.bStart, h.bLen))
		for _, op := range h.ops {
			if lines == maxDiffLines {
				fmt.Fprintf(&out, "... (diff cut at %d lines)\n", maxDiffLines)
				return out.String()
			}
			lines++
			switch op.kind {
			case ' ':
				out.WriteString(" " + x[op.a])
			case '-':
				out.WriteString("-" + x[op.a])
			case '+':
				out.WriteString("+" + y[op.b])
			}
		}
	}
	return out.String()
}

func span(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	if n == 1 {
		return fmt.Sprint(start + 1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

// splitLines keeps each line's newline; a last line without one gets a
// marker so that a missing final newline shows in the diff.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		return lines[:len(lines)-1]
	}
	lines[len(lines)-1] += "\n\\ No newline at end of file\n"
	return lines
}

type diffOp struct {
	kind byte // ' ', '-', '+'
	a, b int  // line indexes in a (for ' ' and '-') and b (for ' ' and '+')
}

// diffLines matches the lines of x and y: common prefix and suffix, then a
// longest common subsequence of the middle when it is small enough.
func diffLines(x, y []string) []diffOp {
	pre := 0
	for pre < len(x) && pre < len(y) && x[pre] == y[pre] {
		pre++
	}
	suf := 0
	for suf < len(x)-pre && suf < len(y)-pre && x[len(x)-1-suf] == y[len(y)-1-suf] {
		suf++
	}
	var ops []diffOp
	for i := range pre {
		ops = append(ops, diffOp{' ', i, i})
	}
	mx, my := x[pre:len(x)-suf], y[pre:len(y)-suf]
	n, m := len(mx), len(my)
	if n*m <= maxLCSCells {
		// lcs[i][j]: length of the LCS of mx[i:] and my[j:].
		w := m + 1
		lcs := make([]int32, (n+1)*w)
		for i := n - 1; i >= 0; i-- {
			for j := m - 1; j >= 0; j-- {
				if mx[i] == my[j] {
					lcs[i*w+j] = lcs[(i+1)*w+j+1] + 1
				} else {
					lcs[i*w+j] = max(lcs[(i+1)*w+j], lcs[i*w+j+1])
				}
			}
		}
		i, j := 0, 0
		for i < n || j < m {
			switch {
			case i < n && j < m && mx[i] == my[j]:
				ops = append(ops, diffOp{' ', pre + i, pre + j})
				i++
				j++
			case i < n && (j == m || lcs[(i+1)*w+j] >= lcs[i*w+j+1]):
				ops = append(ops, diffOp{'-', pre + i, pre + j})
				i++
			default:
				ops = append(ops, diffOp{'+', pre + i, pre + j})
				j++
			}
		}
	} else {
		for i := range n {
			ops = append(ops, diffOp{'-', pre + i, pre})
		}
		for j := range m {
			ops = append(ops, diffOp{'+', pre + n, pre + j})
		}
	}
	for k := range suf {
		ops = append(ops, diffOp{' ', len(x) - suf + k, len(y) - suf + k})
	}
	return ops
}

type hunk struct {
	aStart, aLen, bStart, bLen int
	ops                        []diffOp
}

// hunks groups the changes with ctx lines of context around each.
func hunks(ops []diffOp, ctx int) []hunk {
	var out []hunk
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		start := max(0, i-ctx)
		end := i
		// Extend over changes separated by at most 2*ctx unchanged lines.
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			k := end
			for k < len(ops) && ops[k].kind == ' ' {
				k++
			}
			if k == len(ops) || k-end > 2*ctx {
				end = min(len(ops), end+ctx)
				break
			}
			end = k
		}
		h := hunk{ops: ops[start:end]}
		h.aStart, h.bStart = ops[start].a, ops[start].b
		for _, op := range h.ops {
			if op.kind != '+' {
				h.aLen++
			}
			if op.kind != '-' {
				h.bLen++
			}
		}
		out = append(out, h)
		i = end
	}
	return out
}
