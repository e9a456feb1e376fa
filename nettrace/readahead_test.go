package nettrace

import (
	"io"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// writeRejectedBigBlocks writes a stream of n event blocks of size bytes
// each whose very first event header is corrupt (overlong varints): the
// reader must reject it without reading the rest ahead.
func writeRejectedBigBlocks(out io.Writer, n, size int) (int, error) {
	s, err := newRawV4(out)
	if err != nil {
		return 0, err
	}
	head := blockHead(nil)
	chunk := make([]byte, 64<<10) // the generator holds 64 KiB, not a block
	for i := range chunk {
		chunk[i] = 0xFF
	}
	for range n {
		s.begin("EventBlock", size)
		s.write(head)
		for left := size - len(head); left > 0; left -= len(chunk) {
			s.write(chunk[:min(left, len(chunk))])
		}
		s.write([]byte{tagEndObject})
	}
	return 0, s.end()
}

// TestHostileReadAheadBound: a file of eight 32 MiB event blocks whose first
// event is corrupt (issue 29: a file rejected at its start cost 281 MB with
// one decoder, 807 MB with two and 1.33 GB with eight, the read-ahead
// counting blocks, not bytes) is rejected with a bounded heap whatever the
// decoder count: at most the block being decoded and the read-ahead
// budget, plus the reader's pools. The heap is sampled while it reads.
func TestHostileReadAheadBound(t *testing.T) {
	const blocks, size = 8, 32 << 20
	writeHostile(t, "rejected-8x255MiB.nettrace", func(w io.Writer) (int, error) { return writeRejectedBigBlocks(w, 8, 255<<20) })
	for _, threads := range []int{1, 2, 8} {
		runtime.GC()
		var base runtime.MemStats
		runtime.ReadMemStats(&base)
		var peak atomic.Uint64
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			var ms runtime.MemStats
			for {
				runtime.ReadMemStats(&ms)
				if ms.HeapAlloc > peak.Load() {
					peak.Store(ms.HeapAlloc)
				}
				select {
				case <-stop:
					return
				case <-time.After(5 * time.Millisecond):
				}
			}
		}()
		r, err := NewReaderOptions(piped(func(w io.Writer) (int, error) { return writeRejectedBigBlocks(w, blocks, size) }), Options{Threads: threads})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for {
			_, err = r.Next()
			if err != nil {
				break
			}
			n++
		}
		r.Close()
		close(stop)
		<-done
		if err == io.EOF {
			t.Errorf("%d threads: the corrupt stream read to its end (%d events)", threads, n)
		}
		grew := int64(peak.Load()) - int64(base.HeapAlloc)
		t.Logf("%d threads: %v after %d events; heap grew by at most %d MiB", threads, err, n, grew>>20)
		// The block Next decodes and the budget's slack: 32 MiB measured
		// whatever the decoders (97 MiB before with eight: the framer read
		// a block while it waited to queue another, and one block always
		// went ahead however large).
		if bound := int64(size + readAhead); grew > bound {
			t.Errorf("%d threads: the heap grew by %d MiB rejecting a corrupt stream, want at most %d MiB", threads, grew>>20, bound>>20)
		}
	}
}
