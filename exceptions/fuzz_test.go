package exceptions

import (
	"testing"

	"github.com/clrspy/clrspy/nettrace"
)

// FuzzExceptions feeds the analysis a sequence of exception events made
// from the input (ids, threads, payloads of any length and content) with
// tight bounds: it must not panic, and its totals must hold together.
func FuzzExceptions(f *testing.F) {
	thrown := append(append(utf16z("System.InvalidOperationException"), utf16z("order 7 at 0xff")...), make([]byte, 16)...)
	f.Add(append([]byte{0, 1, byte(len(thrown))}, thrown...))
	f.Add([]byte{1, 1, 20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 'M', 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		ids := []uint32{80, 250, 251, 252, 253, 254, 255, 256}
		a := New(&nettrace.Header{PointerSize: 8, QPCFrequency: 1e9}, Options{MaxTypes: 2, MaxStacks: 2, MaxPatterns: 2, MaxCatchSites: 2, BinNs: 1})
		for i := 0; len(data) >= 3; i++ {
			id, tid, n := ids[int(data[0])%len(ids)], uint64(data[1]%3), int(data[2])
			data = data[3:]
			n = min(n, len(data))
			ev := &nettrace.Event{Meta: &nettrace.Metadata{Runtime: nettrace.Runtime, EventID: id, Version: 1},
				Payload: data[:n], ThreadID: tid, Timestamp: int64(i) * 1000, Stack: []uint64{uint64(n), uint64(i % 3)}}
			data = data[n:]
			a.Event(ev)
		}
		r := a.Result()
		if err := r.CheckValid(); err != nil {
			t.Fatal(err)
		}
		var n int64
		for _, ty := range r.Types {
			n += ty.Count
		}
		if n != r.Thrown || r.Caught > r.Thrown || r.Uncaught+r.Caught > r.Thrown {
			t.Fatalf("thrown %d (types %d) caught %d uncaught %d", r.Thrown, n, r.Caught, r.Uncaught)
		}
		a.Summary(1, 1)
	})
}
