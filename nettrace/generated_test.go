package nettrace

import (
	"bytes"
	"io"
	"testing"
)

// generateLarge is tracegen.Large, set by generated_hook_test.go (package
// nettrace_test): the generator imports nettrace, so this package's own
// tests reach it through the external test package.
var generateLarge func(w io.Writer, approxBytes int64, seed uint64) error

// SetGenerator is how the external test package hands generateLarge over.
func SetGenerator(f func(w io.Writer, approxBytes int64, seed uint64) error) { generateLarge = f }

// random is tracegen.Random (set the same way): n events on threads
// capture threads, strictly increasing timestamps, unique payloads ("EV" +
// index), stacks from a small pool and some activity ids.
var random func(n, threads int, seed uint64) []Event

// SetRandom is how the external test package hands random over.
func SetRandom(f func(n, threads int, seed uint64) []Event) { random = f }

// generated is a tracegen.Large trace of about approxBytes.
func generated(tb testing.TB, approxBytes int64, seed uint64) []byte {
	tb.Helper()
	var b bytes.Buffer
	if err := generateLarge(&b, approxBytes, seed); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

// BenchmarkReadGenerated measures reader throughput on a generated trace;
// the Threads variants read it with a pipeline.
func BenchmarkReadGenerated(b *testing.B)         { benchGenerated(b, 1) }
func BenchmarkReadGeneratedThreads2(b *testing.B) { benchGenerated(b, 2) }
func BenchmarkReadGeneratedThreads3(b *testing.B) { benchGenerated(b, 3) }

// BenchmarkReadGeneratedKeepGC keeps what `clrspy gc` uses (GC and
// suspension events, 16 % of this trace): the others are skipped in the
// decoder but for each run's ends.
func BenchmarkReadGeneratedKeepGC(b *testing.B) { benchGenerated(b, 1, keepGCBench) }
func BenchmarkReadGeneratedKeepGCThreads2(b *testing.B) {
	benchGenerated(b, 2, keepGCBench)
}

// BenchmarkReadGeneratedKeepNone rejects every event, as `clrspy stat`
// does (it needs only the counts, Reader.Summarize).
func BenchmarkReadGeneratedKeepNone(b *testing.B) {
	benchGenerated(b, 1, func(*Metadata) bool { return false })
}

func keepGCBench(m *Metadata) bool { return m.Runtime == Runtime && m.EventID <= 9 }

func benchGenerated(b *testing.B, threads int, keep ...func(*Metadata) bool) {
	buf := bytes.NewBuffer(generated(b, 32<<20, 1))
	opt := Options{Threads: threads}
	if len(keep) > 0 {
		opt.Keep = keep[0]
	}
	benchReadData(b, buf.Bytes(), false, opt)
}

// BenchmarkReadGeneratedV6 measures reader throughput on the generated
// trace rewritten as NetTrace V6.
func BenchmarkReadGeneratedV6(b *testing.B) {
	buf := bytes.NewBuffer(generated(b, 32<<20, 1))
	_, _, outs := copyTrace(b, bytes.NewReader(buf.Bytes()), WriterOptions{Format: FormatNetTraceV6})
	b.SetBytes(int64(len(outs[0])))
	for b.Loop() {
		rd, err := NewReader(bytes.NewReader(outs[0]))
		if err != nil {
			b.Fatal(err)
		}
		for {
			if _, err := rd.Next(); err != nil {
				if err != io.EOF {
					b.Fatal(err)
				}
				break
			}
		}
	}
}

// benchReadData is benchRead on data in memory, read with opt.
func benchReadData(b *testing.B, data []byte, reuse bool, opt Options) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var events, stackIPs int
	var r *Reader
	src := bytes.NewReader(data)
	for b.Loop() {
		src.Reset(data)
		var err error
		if reuse && r != nil {
			err = r.Reset(src)
		} else {
			r, err = NewReaderOptions(src, opt)
		}
		if err != nil {
			b.Fatal(err)
		}
		events = 0
		for {
			ev, err := r.Next()
			if err != nil {
				if err != io.EOF {
					b.Fatal(err)
				}
				break
			}
			events++
			stackIPs += len(ev.Stack)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(events), "ns/event")
	b.ReportMetric(float64(events), "events")
}
