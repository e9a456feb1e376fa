package nettrace

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Hostile inputs: streams a runtime never writes but a file may contain,
// built by generators kept here. `go test ./nettrace -run Hostile -args
// -hostile.out DIR` also writes them to DIR (scripts/hostile-rss.sh times
// clrspy on them).

var hostileOut = flag.String("hostile.out", "", "also write the hostile streams to this directory")

// rawV4 writes V4 objects straight to a stream a Writer started: the
// Writer defines the metadata (one event and a sequence point), then the
// generator adds blocks of its own.
type rawV4 struct {
	w    *bufio.Writer
	off  int64
	meta uint32 // the metadata id the Writer gave metaSample
	seq  uint32 // capture thread 1's last sequence number
}

func newRawV4(out io.Writer) (*rawV4, error) {
	w, err := NewWriter(out, testHeader, WriterOptions{})
	if err != nil {
		return nil, err
	}
	if err := w.WriteEvent(&Event{Meta: metaSample, Timestamp: 1000, ThreadID: 1, CaptureThreadID: 1, Payload: []byte{1, 0, 0, 0}}); err != nil {
		return nil, err
	}
	if err := w.Flush(); err != nil {
		return nil, err
	}
	return &rawV4{w: bufio.NewWriterSize(out, 1<<20), off: w.off, meta: w.metaByPtr[metaSample], seq: 1}, nil
}

func (s *rawV4) write(b []byte) {
	n, _ := s.w.Write(b)
	s.off += int64(n)
}

// begin writes an object's type, size and alignment padding; its content
// and end tag follow.
func (s *rawV4) begin(name string, size int) {
	b := appendObjectHeader(nil, name, 2, 2)
	s.write(appendU32(b, uint32(size)))
	if pad := (4 - s.off%4) % 4; pad > 0 {
		s.write(make([]byte, pad))
	}
}

func (s *rawV4) object(name string, content []byte) {
	s.begin(name, len(content))
	s.write(content)
	s.write([]byte{tagEndObject})
}

func (s *rawV4) end() error {
	s.write([]byte{tagNullReference})
	return s.w.Flush()
}

// blockHead is an event block's 20-byte header (compressed headers).
func blockHead(b []byte) []byte {
	b = appendU16(b, 20)
	b = appendU16(b, 1)
	return append(b, make([]byte, 16)...)
}

// event appends a compressed header for an event of capture thread 1 with
// the given stack id and payload size, flagged sorted so it goes out at
// once: the first of a block says everything, later ones only what
// changes.
func (s *rawV4) event(b []byte, first bool, stack uint32, size int) []byte {
	s.seq++
	if first {
		b = append(b, 0x01|0x02|0x04|0x08|0x40|0x80)
		b = binary.AppendUvarint(b, uint64(s.meta))
		b = binary.AppendUvarint(b, uint64(s.seq-1)) // delta from 0, minus one
		b = binary.AppendUvarint(b, 1)               // capture thread
		b = binary.AppendUvarint(b, 0)               // processor
		b = binary.AppendUvarint(b, 1)               // thread
		b = binary.AppendUvarint(b, uint64(stack))
		b = binary.AppendUvarint(b, 2000+uint64(s.seq)) // timestamp delta from 0
		return binary.AppendUvarint(b, uint64(size))
	}
	b = append(b, 0x08|0x40)
	b = binary.AppendUvarint(b, uint64(stack))
	return append(b, 1) // timestamp +1
}

// writeBigBlock writes a stream whose one event block holds size bytes:
// sorted events of 1,000-byte payloads, the last one sized to fill the
// block exactly (compressed blocks have no padding).
func writeBigBlock(out io.Writer, size int) (events int, err error) {
	s, err := newRawV4(out)
	if err != nil {
		return 0, err
	}
	s.begin("EventBlock", size)
	head := blockHead(nil)
	s.write(head)
	left := size - len(head)
	payload := make([]byte, 1000)
	var hb []byte
	for first := true; left > 0; first = false {
		hb = s.event(hb[:0], first, 0, len(payload))
		if len(hb)+2*len(payload)+8 <= left {
			s.write(hb)
			s.write(payload)
			left -= len(hb) + len(payload)
			events++
			continue
		}
		// The last event: sorted, timestamp +1, its own payload size.
		hb = append(hb[:0], 0x40|0x80, 1)
		n := left - len(hb) - 2
		hb = binary.AppendUvarint(hb, uint64(n))
		s.write(hb)
		s.write(make([]byte, n))
		left -= len(hb) + n
		events++
	}
	s.write([]byte{tagEndObject})
	return events, s.end()
}

// stackIP is the ip k of generated stack id: every delivered stack can be
// checked against its id.
func stackIP(id uint32, k int) uint64 { return uint64(id)<<8 | uint64(k) }

// writeManyStacks writes n distinct stacks of depth ips in stack blocks of
// 4,096, each followed by an event block referencing every stack of the
// block once, and stack 1 every 64 events: no sequence point until the end,
// so a reader that keeps every stack holds them all.
func writeManyStacks(out io.Writer, n, depth int) (events int, err error) {
	s, err := newRawV4(out)
	if err != nil {
		return 0, err
	}
	var sb, eb []byte
	for first := 1; first <= n; first += 4096 {
		count := min(4096, n-first+1)
		sb = appendU32(sb[:0], uint32(first))
		sb = appendU32(sb, uint32(count))
		for id := first; id < first+count; id++ {
			sb = appendU32(sb, uint32(depth*8))
			for k := 0; k < depth; k++ {
				sb = appendU64(sb, stackIP(uint32(id), k))
			}
		}
		s.object("StackBlock", sb)
		eb = blockHead(eb[:0])
		for id := first; id < first+count; id++ {
			eb = s.event(eb, id == first, uint32(id), 0)
			events++
			if id%64 == 0 {
				eb = s.event(eb, false, 1, 0)
				events++
			}
		}
		s.object("EventBlock", eb)
	}
	return events, s.end()
}

// writeHostile writes a generated stream to -hostile.out, if set.
func writeHostile(t *testing.T, name string, gen func(io.Writer) (int, error)) {
	if *hostileOut == "" {
		return
	}
	f, err := os.Create(filepath.Join(*hostileOut, name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gen(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// piped runs gen into a pipe: the stream is never held in memory.
func piped(gen func(io.Writer) (int, error)) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		_, err := gen(pw)
		pw.CloseWithError(err)
	}()
	return pr
}

// TestHostileBigBlock: one 64 MiB event block costs its size once. (The
// reader grew its buffer by doubling and copying: 4 + 12 + 28 + 60 + 64
// MiB allocated, the copies alive until a collection; with 256 MiB blocks
// that peaked at 762 MB.) Every event of the block is delivered.
func TestHostileBigBlock(t *testing.T) {
	const size = 64 << 20
	gen := func(w io.Writer) (int, error) { return writeBigBlock(w, size) }
	writeHostile(t, "big-block-256MiB.nettrace", func(w io.Writer) (int, error) { return writeBigBlock(w, 256<<20) })
	for _, threads := range []int{1, 2} {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		r, err := NewReaderOptions(piped(gen), Options{Threads: threads})
		if err != nil {
			t.Fatal(err)
		}
		n, odd := 0, 0
		for {
			ev, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if n > 0 && len(ev.Payload) != 1000 {
				odd++ // the last one fills the block
			}
			n++
		}
		if odd != 1 {
			t.Errorf("%d threads: %d events with other than 1,000-byte payloads, want 1", threads, odd)
		}
		runtime.ReadMemStats(&after)
		if want := size / 1003; n < want {
			t.Errorf("%d threads: %d events, want at least %d", threads, n, want)
		}
		// The block once, plus the reader's queues and the pipe's buffers.
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > size+size/4 {
			t.Errorf("%d threads: reading a %d MiB block allocated %d MiB", threads, size>>20, alloc>>20)
		}
	}
}

// TestHostileBlockTooLarge: a block size above the bound is refused with
// one clear line, before anything is allocated for it.
func TestHostileBlockTooLarge(t *testing.T) {
	var buf bytes.Buffer
	s, err := newRawV4(&buf)
	if err != nil {
		t.Fatal(err)
	}
	s.begin("EventBlock", maxBlockSize+1)
	s.w.Flush()
	_, _, err = readWith(t, buf.Bytes(), Options{})
	var fe *FormatError
	if !errors.As(err, &fe) || fe.Msg != `"EventBlock" of 268435457 bytes is larger than the 268435456 a block may have` {
		t.Fatalf("got %v", err)
	}
}

// TestHostileManyStacks: 3 M distinct stacks without a sequence point. The
// stack cache stays within its budget (it held all of them: 639 MB peak),
// evicts the oldest, counts what it evicted, and never hands out a wrong
// stack: an event whose stack was evicted keeps its StackID with an empty
// Stack and is counted unresolved; every other stack is its own.
func TestHostileManyStacks(t *testing.T) {
	const n, depth = 3_000_000, 2
	gen := func(w io.Writer) (int, error) { return writeManyStacks(w, n, depth) }
	writeHostile(t, "many-stacks-3M.nettrace", gen)
	r, err := NewReader(piped(gen))
	if err != nil {
		t.Fatal(err)
	}
	var events, resolved, unresolved int
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		events++
		if ev.StackID == 0 {
			continue
		}
		if len(ev.Stack) == 0 {
			unresolved++
			continue
		}
		resolved++
		for k, ip := range ev.Stack {
			if ip != stackIP(ev.StackID, k) || len(ev.Stack) != depth {
				t.Fatalf("event %d: stack %d resolved to %x", events, ev.StackID, ev.Stack)
			}
		}
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	st := r.Stats()
	if st.Stacks != n || st.StacksEvicted == 0 || st.UnresolvedStacks != uint64(unresolved) || unresolved == 0 {
		t.Errorf("stacks %d, evicted %d, unresolved %d (counted %d); want %d stacks, some evicted and unresolved",
			st.Stacks, st.StacksEvicted, st.UnresolvedStacks, unresolved, n)
	}
	// Every stack is referenced right after its block: all of those
	// resolve; only the references to stack 1, long evicted, do not.
	if want := n; resolved < want {
		t.Errorf("%d events resolved their stack, want at least %d", resolved, want)
	}
	// What the reader holds at the end: the cache's generations (about
	// 1.5 times the budget at most) and little else.
	if ms.HeapAlloc > DefaultStackCacheBytes*3/2+8<<20 {
		t.Errorf("the reader holds %d MB after 3 M stacks; the stack cache's budget is %d MB", ms.HeapAlloc>>20, DefaultStackCacheBytes>>20)
	}
	runtime.KeepAlive(r)
	t.Logf("%d events, %d stacks evicted, %d unresolved, %d MB held", events, st.StacksEvicted, unresolved, ms.HeapAlloc>>20)
}

// manyStacksTrace is writeManyStacks in memory.
func manyStacksTrace(t testing.TB, n, depth int) []byte {
	var buf bytes.Buffer
	if _, err := writeManyStacks(&buf, n, depth); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
