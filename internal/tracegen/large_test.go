package tracegen_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"io"
	"testing"

	"github.com/clrspy/clrspy/internal/tracegen"
	"github.com/clrspy/clrspy/nettrace"
)

// TestLarge reads a generated trace back and checks it against
// what the generator says it wrote.
func TestLarge(t *testing.T) {
	var buf bytes.Buffer
	st, err := tracegen.Large(&buf, 3<<20, 7)
	if err != nil {
		t.Fatal(err)
	}
	if st.Bytes != int64(buf.Len()) || st.Bytes < 3<<20 || st.Bytes > 3<<20+256<<10 {
		t.Fatalf("wrote %d bytes (stats say %d), want about %d", buf.Len(), st.Bytes, 3<<20)
	}
	rd, err := nettrace.NewReader(bytes.NewReader(buf.Bytes()))
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
		case ev.Meta.Runtime == nettrace.SampleProfiler:
			samples++
			if ev.CaptureThreadID != tracegen.LargeSampler || ev.ThreadID == tracegen.LargeSampler || len(ev.Stack) == 0 {
				t.Fatalf("sample on thread %d captured by %d with %d frames", ev.ThreadID, ev.CaptureThreadID, len(ev.Stack))
			}
		case ev.Meta.Runtime == nettrace.Runtime && ev.Meta.EventID == 1:
			gcs++
			if len(ev.Payload) != 26 || binary.LittleEndian.Uint32(ev.Payload) != uint32(gcs) {
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
	if _, err := tracegen.Large(&a, 200<<10, 3); err != nil {
		t.Fatal(err)
	}
	if _, err := tracegen.Large(&b, 200<<10, 3); err != nil {
		t.Fatal(err)
	}
	if sha256.Sum256(a.Bytes()) != sha256.Sum256(b.Bytes()) {
		t.Error("same seed gave different bytes")
	}
}

// BenchmarkLarge measures writer throughput on the generator's mix (moved from package nettrace).
func BenchmarkLarge(b *testing.B) {
	b.SetBytes(32 << 20)
	for b.Loop() {
		if _, err := tracegen.Large(io.Discard, 32<<20, 1); err != nil {
			b.Fatal(err)
		}
	}
}
