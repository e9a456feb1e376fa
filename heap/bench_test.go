package heap

import (
	"testing"

	"github.com/clrspy/clrspy/clrevents"
)

// BenchmarkRemapGC measures one GC's replay with 10^5 tracked objects and
// 10^4 moved ranges: every object is in a condemned generation and moves,
// alternating between two layouts so each GC moves all of them again.
func BenchmarkRemapGC(b *testing.B) {
	const objects, ranges = 100_000, 10_000
	const per = objects / ranges // objects per range
	const size = 64
	baseA, baseB := uint64(0x10_0000_0000), uint64(0x20_0000_0000)
	tr := New(nil)
	for i := range objects {
		tr.Allocate(Alloc{Address: baseA + uint64(i)*size, Size: size, TypeID: 1, EstBytes: size, EstCount: 1})
	}
	// Ranges from layout A to B and back; B leaves a gap after every range
	// so the mapping is not a plain shift.
	ab := make([]clrevents.MovedRange, ranges)
	ba := make([]clrevents.MovedRange, ranges)
	for r := range ranges {
		oldA := baseA + uint64(r*per)*size
		newB := baseB + uint64(r)*(per*size+256)
		ab[r] = clrevents.MovedRange{OldBase: oldA, NewBase: newB, Length: per * size}
		ba[r] = clrevents.MovedRange{OldBase: newB, NewBase: oldA, Length: per * size}
	}
	batch := make([]clrevents.MovedRange, ranges)
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		src := ab
		if n%2 == 1 {
			src = ba
		}
		copy(batch, src)
		tr.GCStart(int64(n), uint32(n+1), 2, 0)
		tr.Moved(batch)
		tr.GCEnd(uint32(n + 1))
		tr.RestartEEEnd()
	}
	b.StopTimer()
	g := tr.gcs[len(tr.gcs)-1]
	if g.Remapped != objects || g.Died != 0 {
		b.Fatalf("last GC remapped %d died %d", g.Remapped, g.Died)
	}
	b.ReportMetric(float64(objects), "objects/GC")
}

// BenchmarkReplayObjver4 replays the 478-GC objver4 trace (35k sampled
// objects), reading included.
func BenchmarkReplayObjver4(b *testing.B) {
	for range b.N {
		replay(b, "perfview__eventpipe-dotnetcore3.0-win-x64-objver4.nettrace")
	}
}
