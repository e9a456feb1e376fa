package nettrace

import (
	"bytes"
	"crypto/sha256"
	"io"
	"testing"
)

// TestGenerateLarge reads a generated trace back and checks it against
// what the generator says it wrote.
func TestGenerateLarge(t *testing.T) {
	var buf bytes.Buffer
	st, err := GenerateLarge(&buf, 3<<20, 7)
	if err != nil {
		t.Fatal(err)
	}
	if st.Bytes != int64(buf.Len()) || st.Bytes < 3<<20 || st.Bytes > 3<<20+256<<10 {
		t.Fatalf("wrote %d bytes (stats say %d), want about %d", buf.Len(), st.Bytes, 3<<20)
	}
	rd, err := NewReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var n, withStack, samples, gcs int64
	last := int64(0)
	for {
		ev, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if ev.Timestamp < last {
			t.Fatalf("event %d at %d after %d: not in timestamp order", n, ev.Timestamp, last)
		}
		last = ev.Timestamp
		n++
		if len(ev.Stack) > 0 {
			withStack++
		}
		switch {
		case ev.Meta.Runtime == SampleProfiler:
			samples++
			if ev.CaptureThreadID != genSampler || ev.ThreadID == genSampler || len(ev.Stack) == 0 {
				t.Fatalf("sample on thread %d captured by %d with %d frames", ev.ThreadID, ev.CaptureThreadID, len(ev.Stack))
			}
		case ev.Meta.Runtime == Runtime && ev.Meta.EventID == 1:
			gcs++
			if len(ev.Payload) != 26 || le32(ev.Payload) != uint32(gcs) {
				t.Fatalf("GCStart %d payload % x", gcs, ev.Payload)
			}
		}
	}
	s := rd.Stats()
	if n != st.Events || withStack != st.EventsWithStack || samples != st.Samples || gcs != st.GCs {
		t.Errorf("read %d events, %d with stack, %d samples, %d GCs; generator wrote %+v", n, withStack, samples, gcs, st)
	}
	if gcs < 10 || samples < 10*gcs || s.LostEvents != 0 || s.CaptureThreads < 60 || s.SequencePoints == 0 {
		t.Errorf("unrealistic trace: %d GCs, %d samples, stats %+v", gcs, samples, s)
	}

	// Deterministic per seed.
	var a, b bytes.Buffer
	if _, err := GenerateLarge(&a, 200<<10, 3); err != nil {
		t.Fatal(err)
	}
	if _, err := GenerateLarge(&b, 200<<10, 3); err != nil {
		t.Fatal(err)
	}
	if sha256.Sum256(a.Bytes()) != sha256.Sum256(b.Bytes()) {
		t.Error("same seed gave different bytes")
	}
}

// BenchmarkGenerateLarge measures writer throughput on the generator's mix.
func BenchmarkGenerateLarge(b *testing.B) {
	b.SetBytes(32 << 20)
	for b.Loop() {
		if _, err := GenerateLarge(io.Discard, 32<<20, 1); err != nil {
			b.Fatal(err)
		}
	}
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

func keepGCBench(m *Metadata) bool { return m.Runtime == Runtime && m.EventID <= 9 }

func benchGenerated(b *testing.B, threads int, keep ...func(*Metadata) bool) {
	var buf bytes.Buffer
	if _, err := GenerateLarge(&buf, 32<<20, 1); err != nil {
		b.Fatal(err)
	}
	opt := Options{Threads: threads}
	if len(keep) > 0 {
		opt.Keep = keep[0]
	}
	benchReadData(b, buf.Bytes(), false, opt)
}

// BenchmarkReadGeneratedV6 measures reader throughput on the generated
// trace rewritten as NetTrace V6.
func BenchmarkReadGeneratedV6(b *testing.B) {
	var buf bytes.Buffer
	if _, err := GenerateLarge(&buf, 32<<20, 1); err != nil {
		b.Fatal(err)
	}
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
