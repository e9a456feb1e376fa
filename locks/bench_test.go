//go:build compat

package locks

import (
	"bytes"
	"io"
	"os"
	"testing"

	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/stacks"
)

// benchStream reads the contention trace from memory b.N times. mode 0 is
// the reader alone (the floor), 1 adds the analysis, 2 adds the
// symbolizer and the final Result as `clrspy locks` runs them.
func benchStream(b *testing.B, mode int) {
	data, err := os.ReadFile(tracetest.CompatPath(b, "filtrace__contention.nettrace"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var events int
	for b.Loop() {
		r, err := nettrace.NewReader(bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		var sym *stacks.Symbols
		if mode == 2 {
			sym = stacks.NewSymbols(r.Header())
		}
		a := New(r.Header(), Options{Symbols: sym})
		for {
			ev, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			events++
			if mode >= 1 {
				a.Event(ev)
			}
			if sym != nil {
				sym.Event(ev)
			}
		}
		if mode == 2 {
			if res := a.Result(); res.Summary.Contentions != 197 {
				b.Fatalf("%d contentions", res.Summary.Contentions)
			}
		}
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}

func BenchmarkReadOnly(b *testing.B)        { benchStream(b, 0) }
func BenchmarkAnalysis(b *testing.B)        { benchStream(b, 1) }
func BenchmarkAnalysisSymbols(b *testing.B) { benchStream(b, 2) }

// BenchmarkAnalyzeOnly times the analysis alone: the trace's events are
// read and copied once, then fed to a fresh Analyzer per iteration.
func BenchmarkAnalyzeOnly(b *testing.B) {
	data, err := os.ReadFile(tracetest.CompatPath(b, "filtrace__contention.nettrace"))
	if err != nil {
		b.Fatal(err)
	}
	r, err := nettrace.NewReader(bytes.NewReader(data))
	if err != nil {
		b.Fatal(err)
	}
	var evs []nettrace.Event
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
		c := *ev
		c.Payload = append([]byte(nil), ev.Payload...)
		c.Stack = append([]uint64(nil), ev.Stack...)
		evs = append(evs, c)
	}
	b.ReportAllocs()
	for b.Loop() {
		a := New(r.Header(), Options{})
		for i := range evs {
			a.Event(&evs[i])
		}
		if res := a.Result(); res.Summary.Contentions != 197 {
			b.Fatalf("%d contentions", res.Summary.Contentions)
		}
	}
	b.ReportMetric(float64(len(evs)*b.N)/b.Elapsed().Seconds(), "events/s")
}
