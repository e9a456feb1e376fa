package nettrace_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/internal/tracegen"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/report"
	"github.com/clrspy/clrspy/stacks"
)

// The work of `clrspy gc FILE` and `clrspy profile FILE` (reader, analysis,
// result; profile also encodes its pprof) with the reader on one goroutine
// and with a pipeline, on the file CLRSPY_SCALE_TRACE names (scripts/scale.sh
// passes its 1 GiB generated trace) or else on a 64 MiB generated one:
//
//	CLRSPY_SCALE_TRACE=big.nettrace go test ./nettrace -run '^$' -bench 'Scale' -benchtime 1x -count 3
//
// Sub-benchmarks alternate threads=1 and threads=2 within each -count round,
// so their ratio comes from the same minutes of a shared machine.

func scaleTrace(b *testing.B) string {
	if p := os.Getenv("CLRSPY_SCALE_TRACE"); p != "" {
		return p
	}
	p := filepath.Join(b.TempDir(), "scale.nettrace")
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	if _, err := tracegen.Large(w, 64<<20, 1); err != nil {
		b.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return p
}

// scaleRead opens path as the commands do and hands every event to fn.
func scaleRead(b *testing.B, path string, threads int, start func(*nettrace.Header) func(*nettrace.Event)) int64 {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	r, err := nettrace.NewReaderOptions(f, nettrace.Options{Threads: threads})
	if err != nil {
		b.Fatal(err)
	}
	fn := start(r.Header())
	var n int64
	for {
		ev, err := r.Next()
		if err == io.EOF {
			return n
		}
		if err != nil {
			b.Fatal(err)
		}
		fn(ev)
		n++
	}
}

func benchScale(b *testing.B, start func(*nettrace.Header) func(*nettrace.Event), finish func()) {
	path := scaleTrace(b)
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			b.SetBytes(fi.Size())
			var n int64
			for b.Loop() {
				n = scaleRead(b, path, threads, start)
				finish()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/event")
		})
	}
}

func BenchmarkScaleGC(b *testing.B) {
	var a *gcpause.Analyzer
	benchScale(b, func(h *nettrace.Header) func(*nettrace.Event) {
		a = gcpause.New(h, gcpause.Options{})
		return a.Event
	}, func() {
		if res := a.Result(); len(res.GCs) == 0 {
			b.Fatal("no GC")
		}
	})
}

func BenchmarkScaleProfile(b *testing.B) {
	var pb *stacks.Builder
	benchScale(b, func(h *nettrace.Header) func(*nettrace.Event) {
		pb = stacks.New(h, stacks.Options{})
		return pb.Event
	}, func() {
		p := pb.Result()
		if p.Total == 0 {
			b.Fatal("no sample")
		}
		if err := report.WritePprof(io.Discard, p); err != nil {
			b.Fatal(err)
		}
	})
}
