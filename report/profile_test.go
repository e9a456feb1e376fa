package report

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/stacks"
)

var update = flag.Bool("update", false, "rewrite golden files")

const traces = "../../shared/traces"

// buildProfile reads a real trace through a stacks.Builder.
func buildProfile(t testing.TB, name string, opts stacks.Options) *stacks.Profile {
	t.Helper()
	f, err := os.Open(filepath.Join(traces, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := nettrace.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b := stacks.NewBuilder(r.Header(), opts)
	for {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b.Event(ev)
	}
	if n, err := b.DecodeErrors(); n != 0 {
		t.Fatalf("%d payloads did not decode, first: %v", n, err)
	}
	return b.Profile()
}

// TestDotnetdiagGoldens reproduces the four folded-stack files of
// pyroscope-io/dotnetdiag byte for byte (CATALOG.md §7.3).
func TestDotnetdiagGoldens(t *testing.T) {
	for _, c := range []struct {
		trace, golden string
		managedOnly   bool
	}{
		{"dotnetdiag__dotnet-5.0-SampleProfiler-single-thread.golden.nettrace", "dotnet-5.0-SampleProfiler-single-thread.txt", false},
		{"dotnetdiag__dotnet-5.0-SampleProfiler-single-thread.golden.nettrace", "dotnet-5.0-SampleProfiler-single-thread-managed-only.txt", true},
		{"dotnetdiag__dotnet-5.0-SampleProfiler-webapp.golden.nettrace", "dotnet-5.0-SampleProfiler-webapp.txt", false},
		{"dotnetdiag__dotnet-5.0-SampleProfiler-webapp.golden.nettrace", "dotnet-5.0-SampleProfiler-webapp-managed-only.txt", true},
	} {
		t.Run(c.golden, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join(traces, "golden/dotnetdiag", c.golden))
			if err != nil {
				t.Fatal(err)
			}
			p := buildProfile(t, c.trace, stacks.Options{Compat: stacks.CompatDotnetdiag, ManagedOnly: c.managedOnly})
			var got bytes.Buffer
			if err := WriteFolded(&got, p, FoldedOptions{Weight: WeightWall}); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				gl, wl := bytes.Split(got.Bytes(), []byte("\n")), bytes.Split(want, []byte("\n"))
				for i := 0; i < len(gl) && i < len(wl); i++ {
					if !bytes.Equal(gl[i], wl[i]) {
						t.Fatalf("line %d differs (got %d lines, want %d):\ngot  %.300s\nwant %.300s", i+1, len(gl), len(wl), gl[i], wl[i])
					}
				}
				t.Fatalf("got %d lines, want %d", len(gl), len(wl))
			}
		})
	}
}
