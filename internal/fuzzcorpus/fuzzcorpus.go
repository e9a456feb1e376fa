// Package fuzzcorpus is test support: it keeps the checked-in seed corpora
// of the fuzz targets (testdata/fuzz/FuzzXxx/real-* in each package) in
// step with the real traces and payloads they are built from, so that a
// plain `go test` replays them without ../shared and `go test -fuzz`
// starts from real inputs.
//
// Each package's TestFuzzCorpus builds its seeds and calls Check: with
// -update-corpus the real-* files of every target are rewritten, otherwise
// the files on disk must be exactly the ones the seeds encode to.
package fuzzcorpus

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Update rewrites the checked-in seed files instead of comparing them.
var Update = flag.Bool("update-corpus", false, "rewrite the checked-in fuzz seed corpora (testdata/fuzz/*/real-*)")

// Prefix starts the name of every seed file this package manages; the
// fuzzer's own finds (hash names) and regression inputs are left alone.
const Prefix = "real-"

// Seed is one input of a fuzz target: the arguments of its fuzz function,
// in order, and a short label saying where it comes from.
type Seed struct {
	Label string
	Args  []any
}

// Marshal encodes args in the "go test fuzz v1" corpus file format.
func Marshal(args ...any) []byte {
	b := bytes.NewBufferString("go test fuzz v1\n")
	for _, a := range args {
		switch v := a.(type) {
		case []byte:
			fmt.Fprintf(b, "[]byte(%q)\n", v)
		case string:
			fmt.Fprintf(b, "string(%q)\n", v)
		case byte:
			fmt.Fprintf(b, "byte(%q)\n", v)
		case int, int8, int16, int64, uint, uint16, uint32, uint64, bool:
			fmt.Fprintf(b, "%T(%v)\n", v, v)
		default:
			panic(fmt.Sprintf("fuzzcorpus: unsupported argument type %T", a))
		}
	}
	return b.Bytes()
}

// fileName is real-LABEL-HASH: the label for people, the content hash so
// that two seeds with the same label do not collide.
func fileName(s Seed, content []byte) string {
	sum := sha256.Sum256(content)
	label := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '.', r == '_':
			return r
		}
		return '_'
	}, s.Label)
	if len(label) > 60 {
		label = label[:60]
	}
	return Prefix + label + "-" + hex.EncodeToString(sum[:4])
}

// Check compares (or, with -update-corpus, writes) the seed files of
// target in testdata/fuzz/TARGET.
func Check(t *testing.T, target string, seeds []Seed) {
	t.Helper()
	if len(seeds) == 0 {
		t.Fatalf("%s: no seeds", target)
	}
	dir := filepath.Join("testdata", "fuzz", target)
	want := map[string][]byte{}
	for _, s := range seeds {
		c := Marshal(s.Args...)
		want[fileName(s, c)] = c
	}
	have := map[string][]byte{}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), Prefix) {
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			have[e.Name()] = b
		}
	}
	if *Update {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for n := range have {
			if _, ok := want[n]; !ok {
				os.Remove(filepath.Join(dir, n))
			}
		}
		for n, c := range want {
			if err := os.WriteFile(filepath.Join(dir, n), c, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("%s: wrote %d seed files", target, len(want))
		return
	}
	var missing, extra, changed []string
	for n, c := range want {
		h, ok := have[n]
		switch {
		case !ok:
			missing = append(missing, n)
		case !bytes.Equal(h, c):
			changed = append(changed, n)
		}
	}
	for n := range have {
		if _, ok := want[n]; !ok {
			extra = append(extra, n)
		}
	}
	if len(missing)+len(extra)+len(changed) > 0 {
		sort.Strings(missing)
		sort.Strings(extra)
		sort.Strings(changed)
		t.Errorf("%s: checked-in seeds differ from the real inputs (missing %v, stale %v, changed %v): run go test -run TestFuzzCorpus -update-corpus", dir, missing, extra, changed)
	}
}

// CheckPresent is Check for seeds that cannot be rebuilt without a live
// process (ipc replies): without -update-corpus it only requires the seed
// files to exist.
func CheckPresent(t *testing.T, target string, build func() []Seed) {
	t.Helper()
	if *Update {
		Check(t, target, build())
		return
	}
	dir := filepath.Join("testdata", "fuzz", target)
	m, _ := filepath.Glob(filepath.Join(dir, Prefix+"*"))
	if len(m) == 0 {
		t.Errorf("%s: no checked-in seed files: run go test -run TestFuzzCorpus -update-corpus", dir)
	}
}

// Cap truncates b to at most n bytes (seeds stay small; the fuzzer grows
// them when that finds something).
func Cap(b []byte, n int) []byte {
	if len(b) > n {
		b = b[:n]
	}
	return append([]byte(nil), b...)
}
