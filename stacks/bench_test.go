//go:build compat

package stacks

import (
	"bytes"
	"errors"
	"io"
	"os"
	"runtime"
	"testing"

	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/nettrace"
)

const webapp = "dotnetdiag__dotnet-5.0-SampleProfiler-webapp.golden.nettrace"

func readTrace(b *testing.B) []byte {
	data, err := os.ReadFile(tracetest.CompatPath(b, webapp))
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// BenchmarkReadWebapp is the floor: reading the 83k-sample trace without
// analysis (what clrspy stat costs).
func BenchmarkReadWebapp(b *testing.B) {
	data := readTrace(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		r, err := nettrace.NewReader(bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		for {
			_, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(82945*float64(b.N)/b.Elapsed().Seconds(), "samples/s")
}

// BenchmarkProfileWebapp reads the same trace through a Builder and
// resolves the profile; heap-MB is the live heap with the profile built.
func BenchmarkProfileWebapp(b *testing.B) {
	data := readTrace(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var ms runtime.MemStats
	var heap float64
	for b.Loop() {
		r, err := nettrace.NewReader(bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		bl := New(r.Header(), Options{})
		for {
			ev, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			bl.Event(ev)
		}
		p := bl.Result()
		if p.Total != 82945 {
			b.Fatalf("%d samples", p.Total)
		}
		runtime.ReadMemStats(&ms)
		heap = max(heap, float64(ms.HeapAlloc)/(1<<20))
	}
	b.ReportMetric(82945*float64(b.N)/b.Elapsed().Seconds(), "samples/s")
	b.ReportMetric(heap, "heap-MB")
}
