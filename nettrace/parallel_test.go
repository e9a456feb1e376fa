package nettrace

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"github.com/clrspy/clrspy/internal/tracetest"
	"hash/maphash"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// readWith reads a whole stream with opt: a fingerprint of every event
// (see print), the stats and the error that ended it (or NewReader's).
func readWith(t testing.TB, data []byte, opt Options) ([]uint64, Stats, error) {
	t.Helper()
	r, err := NewReaderOptions(bytes.NewReader(data), opt)
	if err != nil {
		return nil, Stats{}, err
	}
	var out []uint64
	for {
		ev, err := r.Next()
		if err != nil {
			st := *r.Stats()
			st.Blocks = maps.Clone(st.Blocks)
			if _, again := r.Next(); again != err {
				t.Fatalf("Next after the end returned %v, then %v", err, again)
			}
			return out, st, err
		}
		out = append(out, print(ev))
	}
}

// print hashes every field of ev (the metadata by what the stream says of
// it: two readers have records of their own).
func print(ev *Event) uint64 {
	h := maphash.Hash{}
	h.SetSeed(printSeed)
	var b [8]byte
	u := func(v uint64) {
		binary.LittleEndian.PutUint64(b[:], v)
		h.Write(b[:])
	}
	m := ev.Meta
	u(uint64(m.ID)<<32 | uint64(m.EventID))
	u(uint64(m.Version)<<16 | uint64(m.Opcode)<<8 | uint64(m.Level))
	u(m.Keywords)
	h.WriteString(m.Provider)
	h.WriteString(m.Name)
	u(uint64(ev.Timestamp))
	u(ev.ThreadID)
	u(ev.CaptureThreadID)
	u(uint64(ev.ProcessorNumber)<<32 | uint64(ev.SequenceNumber))
	u(uint64(ev.StackID)<<32 | uint64(ev.LostBefore))
	if ev.IsSorted {
		u(1)
	}
	h.Write(ev.ActivityID[:])
	h.Write(ev.RelatedActivityID[:])
	u(uint64(len(ev.Stack)))
	for _, ip := range ev.Stack {
		u(ip)
	}
	u(uint64(len(ev.Payload)))
	h.Write(ev.Payload)
	return h.Sum64()
}

var printSeed = maphash.MakeSeed()

// sameRead fails unless reading data with opt delivers exactly what a
// one-goroutine read delivers: events in the same order, field for field,
// the same stats and the same ending.
func sameRead(t *testing.T, name string, data []byte, opt Options) {
	t.Helper()
	want, wst, werr := readWith(t, data, Options{StackCacheBytes: opt.StackCacheBytes})
	got, gst, gerr := readWith(t, data, opt)
	if fmt.Sprint(werr) != fmt.Sprint(gerr) {
		t.Fatalf("%s, %d threads: ended with %v, one goroutine with %v", name, opt.Threads, gerr, werr)
	}
	if len(got) != len(want) {
		t.Fatalf("%s, %d threads: %d events, one goroutine %d", name, opt.Threads, len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%s, %d threads: event %d differs", name, opt.Threads, i)
		}
	}
	// Queue sizes may differ by when chunks are freed; nothing else may.
	gst.PeakQueueBytes, wst.PeakQueueBytes = 0, 0
	if fmt.Sprint(gst) != fmt.Sprint(wst) {
		t.Fatalf("%s, %d threads: stats\n got %+v\nwant %+v", name, opt.Threads, gst, wst)
	}
}

// parallelInputs are streams of every kind: the real traces and fragments,
// generated traces in V4, V6 and uncompressed V4, and one without sort flags
// or sequence points.
func parallelInputs(t *testing.T) map[string][]byte {
	t.Helper()
	in := map[string][]byte{}
	var paths []string
	for _, name := range tracetest.Fixtures(t) {
		paths = append(paths, tracetest.Path(t, name))
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		in[filepath.Base(p)] = data
	}
	gen := generated(t, 3<<20, 3)
	in["generated"] = gen
	_, _, copies := copyTrace(t, bytes.NewReader(gen),
		WriterOptions{Format: FormatNetTraceV6}, WriterOptions{Uncompressed: true, BlockSize: 8 << 10})
	in["generated v6"], in["generated uncompressed"] = copies[0], copies[1]
	in["unsorted"] = writeAll(t, random(20000, 5, 7), WriterOptions{Unsorted: true, SequencePointEvery: 1 << 40, BlockSize: 4096})
	return in
}

// TestParallelSameAsSequential: with 2, 3 and 5 threads the reader delivers
// exactly what it delivers on one goroutine, for every kind of stream,
// whole and cut at many offsets (every complete event, then the same
// truncation).
func TestParallelSameAsSequential(t *testing.T) {
	for name, data := range parallelInputs(t) {
		for _, n := range []int{2, 3, 5} {
			sameRead(t, name, data, Options{Threads: n})
		}
		rng := rand.New(rand.NewPCG(uint64(len(data)), 1))
		for i := 0; i < 12; i++ {
			cut := rng.IntN(len(data) + 1)
			sameRead(t, fmt.Sprintf("%s cut at %d", name, cut), data[:cut], Options{Threads: 2 + i%3})
		}
	}
}

// TestParallelCorrupt: streams with bytes flipped end the same way, after
// the same events, on one goroutine and with several: a decoder that finds
// a bad event ends the stream there even though the framer read on.
func TestParallelCorrupt(t *testing.T) {
	data, err := os.ReadFile(tracetest.Path(t, "gc-wks.nettrace"))
	if err != nil {
		t.Fatal(err)
	}
	gen := generated(t, 2<<20, 5)
	for name, src := range map[string][]byte{"gc-wks": data, "generated": gen} {
		rng := rand.New(rand.NewPCG(9, uint64(len(src))))
		buf := make([]byte, len(src))
		for i := 0; i < 40; i++ {
			copy(buf, src)
			for k := 0; k < 1+i%4; k++ {
				buf[rng.IntN(len(buf))] ^= byte(1 + rng.IntN(255))
			}
			sameRead(t, fmt.Sprintf("%s flip %d", name, i), buf, Options{Threads: 3})
		}
	}
}

// TestParallelStackCache: with a stack cache small enough to evict, the
// parallel reader resolves (and fails to resolve) exactly the stacks the
// one-goroutine reader does.
func TestParallelStackCache(t *testing.T) {
	data := manyStacksTrace(t, 60000, 3)
	sameRead(t, "many stacks", data, Options{Threads: 3, StackCacheBytes: 2 << 20})
}

// TestParallelResetAndClose: a parallel Reader abandoned half way, Reset to
// other streams, then closed mid-stream, delivers on each stream what a
// fresh one-goroutine Reader delivers, and leaves no goroutine behind.
func TestParallelResetAndClose(t *testing.T) {
	data, err := os.ReadFile(tracetest.Path(t, "gc-wks.nettrace"))
	if err != nil {
		t.Fatal(err)
	}
	_, _, copies := copyTrace(t, bytes.NewReader(data), WriterOptions{Format: FormatNetTraceV6})
	before := runtime.NumGoroutine()
	var rd *Reader
	for i, s := range []struct {
		data []byte
		stop int
	}{{data, 1500}, {copies[0], 0}, {data[:len(data)/3], 0}, {data, 300}, {data, 0}} {
		want, _, wantErr := readWith(t, s.data, Options{})
		want = want[:min(len(want), max(s.stop, len(want)*(1-min(s.stop, 1))))]
		if rd == nil {
			rd, err = NewReaderOptions(bytes.NewReader(s.data), Options{Threads: 3})
		} else {
			err = rd.Reset(bytes.NewReader(s.data))
		}
		if err != nil {
			t.Fatal(err)
		}
		var got []uint64
		var end error
		for s.stop == 0 || len(got) < s.stop {
			ev, err := rd.Next()
			if err != nil {
				end = err
				break
			}
			got = append(got, print(ev))
		}
		if s.stop != 0 {
			wantErr = nil
		}
		if fmt.Sprint(end) != fmt.Sprint(wantErr) || len(got) != len(want) {
			t.Fatalf("stream %d: %d events ending %v, want %d ending %v", i, len(got), end, len(want), wantErr)
		}
		for k := range want {
			if got[k] != want[k] {
				t.Fatalf("stream %d: event %d differs", i, k)
			}
		}
	}
	if err := rd.Reset(bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	for range 10 {
		if _, err := rd.Next(); err != nil {
			t.Fatal(err)
		}
	}
	rd.Close()
	if _, err := rd.Next(); err == nil || err == io.EOF {
		t.Fatalf("Next after Close: %v, want the closed error", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Fatalf("%d goroutines after Close, %d before the reader", n, before)
	}
}

// FuzzParallel: on any input a pipelined Reader delivers exactly what a
// one-goroutine Reader delivers and ends the same way (seeds: FuzzReader's).
func FuzzParallel(f *testing.F) {
	for _, name := range tracetest.Fixtures(f) {
		p := tracetest.Path(f, name)
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		if len(b) > 16<<10 {
			b = b[:16<<10]
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sameRead(t, "input", data, Options{Threads: 3})
	})
}
