package nettrace

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"reflect"
	"testing"

	"github.com/clrspy/clrspy/internal/tracetest"
)

// TestRelease: a Reader released at the end of its stream (one goroutine
// and pipelined, whole and cut) keeps its stats, metadata and format
// version, holds no block buffer, chunk or stack generation any more,
// reports the same end again, and reads the next stream after Reset as a
// new Reader would. Released before the end, it ends as a closed one.
func TestRelease(t *testing.T) {
	data, err := os.ReadFile(tracetest.Path(t, "gc-wks.nettrace"))
	if err != nil {
		t.Fatal(err)
	}
	for _, threads := range []int{1, 3} {
		for _, in := range [][]byte{data, data[:len(data)/3]} {
			want, wantStats, wantErr := readWith(t, in, Options{Threads: threads})
			r, err := NewReaderOptions(bytes.NewReader(in), Options{Threads: threads})
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			var end error
			for {
				if _, end = r.Next(); end != nil {
					break
				}
				n++
			}
			metas := len(r.Metadata())
			version := r.FormatVersion()
			r.Release()
			st := *r.Stats()
			st.Blocks = maps.Clone(st.Blocks)
			if n != len(want) || fmt.Sprint(end) != fmt.Sprint(wantErr) || !reflect.DeepEqual(st, wantStats) {
				t.Errorf("threads %d, %d bytes: %d events ending %v, stats after Release %+v; want %d ending %v, %+v",
					threads, len(in), n, end, st, len(want), wantErr, wantStats)
			}
			if len(r.Metadata()) != metas || metas == 0 || r.FormatVersion() != version {
				t.Errorf("threads %d: %d metadata and version %d after Release, %d and %d before", threads, len(r.Metadata()), r.FormatVersion(), metas, version)
			}
			if _, again := r.Next(); fmt.Sprint(again) != fmt.Sprint(end) {
				t.Errorf("threads %d: Next after Release: %v, want %v", threads, again, end)
			}
			if r.pool != nil || r.rfree != nil || r.genPool != nil || r.slabs.slabs != nil || r.inflight != nil ||
				r.stacks.young != nil || r.stacks.old != nil || r.src != nil || r.pipe != nil {
				t.Errorf("threads %d: Release kept buffers: pool %d, chunks %v, generations %d, slabs %d, in flight %d",
					threads, len(r.pool), r.rfree != nil, len(r.genPool), len(r.slabs.slabs), len(r.inflight))
			}
			// Reset after Release: the whole trace again, as a new Reader.
			if err := r.Reset(bytes.NewReader(data)); err != nil {
				t.Fatal(err)
			}
			full, _, fullErr := readWith(t, data, Options{})
			k := 0
			for {
				ev, err := r.Next()
				if err != nil {
					if fmt.Sprint(err) != fmt.Sprint(fullErr) {
						t.Errorf("threads %d: after Reset, end %v, want %v", threads, err, fullErr)
					}
					break
				}
				if k >= len(full) || print(ev) != full[k] {
					t.Fatalf("threads %d: after Reset, event %d differs", threads, k)
				}
				k++
			}
			if k != len(full) {
				t.Errorf("threads %d: after Reset, %d events, want %d", threads, k, len(full))
			}
			r.Close()
		}
	}
	// Before the end: the rest is dropped, as by Close.
	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
	}
	r.Release()
	if _, err := r.Next(); err != errReaderClosed {
		t.Errorf("Next after an early Release: %v, want %v", err, errReaderClosed)
	}
	if got := r.Stats().Events; got < 10 {
		t.Errorf("stats after an early Release: %d events, want at least the 10 delivered", got)
	}
}
