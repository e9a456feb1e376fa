//go:build compat

package gcpause

import (
	"testing"

	"github.com/clrspy/clrspy/internal/fuzzcorpus"
	"github.com/clrspy/clrspy/internal/fuzzcorpus/realtrace"
	"github.com/clrspy/clrspy/nettrace"
)

// TestFuzzCorpus keeps FuzzAnalyzer's checked-in seeds in step with the
// real traces: the first GC events of each trace that has some, encoded in
// the fuzz target's input language (3 bytes per event: id and payload
// length, thread and version, time step and lost flag; then the payload).
func TestFuzzCorpus(t *testing.T) {
	// The order of FuzzAnalyzer's ids.
	ids := []uint32{1, 2, 3, 4, 7, 8, 9, 35, 204, 205}
	index := map[uint32]int{}
	for i, id := range ids {
		index[id] = i
	}
	var seeds []fuzzcorpus.Seed
	for _, file := range []string{
		"perfview__eventpipe-dotnetcore3.0-win-x64-objver4.nettrace",
		"filtrace__alloc.nettrace",
		"diagnostics__trace.nettrace",
		"dotnetdiag__dotnet-5.0-SampleProfiler-webapp.golden.nettrace",
	} {
		// Encoded events, each starting at rec[i]; the seed starts at the
		// suspension of the first GC (the runtime suspends for other
		// reasons too).
		var recs [][]byte
		var evIDs []uint32
		var last int64
		threads := map[uint64]byte{}
		realtrace.Each(t, file, func(ev *nettrace.Event, hdr *nettrace.Header) bool {
			i, ok := index[ev.Meta.EventID]
			if ev.Meta.Runtime != nettrace.Runtime || !ok {
				return true
			}
			k := min((len(ev.Payload)+7)/8, 15)
			b0 := byte(16*k + ((i-6*k)%10+10)%10) // b0%10 == i, b0>>4 == k
			th, ok := threads[ev.ThreadID]
			if !ok {
				th = byte(len(threads) % 4)
				threads[ev.ThreadID] = th
			}
			step := int64(0)
			if last != 0 {
				step = (ev.Timestamp - last) * 10_000 / hdr.QPCFrequency // 0.1 ms
			}
			last = ev.Timestamp
			r := []byte{b0, th | byte(ev.Meta.Version%5)<<4, byte(min(step, 127))}
			p := make([]byte, 8*k)
			copy(p, ev.Payload)
			recs = append(recs, append(r, p...))
			evIDs = append(evIDs, ev.Meta.EventID)
			return len(recs) < 200_000
		})
		first := -1
		for i, id := range evIDs {
			if id == 1 {
				first = i
				break
			}
		}
		var b []byte
		n := 0
		if first >= 0 {
			from := first
			for from > 0 && evIDs[from] != 9 {
				from--
			}
			for _, r := range recs[from:min(from+60, len(recs))] {
				b = append(b, r...)
				n++
			}
		}
		if n > 0 {
			// Replayed as FuzzAnalyzer reads it, the seed holds complete GCs.
			fd := newFeed(t)
			at := 0.0
			for in := b; len(in) >= 3; {
				l := min(len(in)-3, int(in[0]>>4)*8)
				at += float64(in[2]) / 10
				fd.ev(ids[int(in[0])%len(ids)], uint32(in[1]>>4)%5, at, uint64(in[1]%4), in[3:3+l], uint32(in[2]>>7))
				in = in[3+l:]
			}
			if c := fd.result().Complete; c == 0 {
				t.Errorf("%s: the seed decodes to no complete GC", file)
			}
			seeds = append(seeds, fuzzcorpus.Seed{Label: file[:len(file)-len(".nettrace")] + "-first60", Args: []any{b}})
		}
	}
	fuzzcorpus.Check(t, "FuzzAnalyzer", seeds)
}
