package tracegen

import (
	"bytes"
	"fmt"
	"math/rand/v2"

	"github.com/clrspy/clrspy/nettrace"
)

// Random are the metadata of Random's events: the sample profiler's
// ThreadSample, an EventSource event with nested fields and one with an
// array of objects (the shapes the writer's metadata encodings differ
// on).
var (
	RandomSample = &nettrace.Metadata{Provider: nettrace.ProviderSampleProfiler, EventID: 0, Level: 4, HasFields: true}
	RandomCustom = &nettrace.Metadata{
		Provider: "My-Source", EventID: 3, EventName: "Work", Keywords: 0xF00, Version: 1, Level: 5, Opcode: 1,
		HasFields: true,
		Fields: []nettrace.Field{
			{Name: "id", Type: nettrace.FieldType{Code: nettrace.TypeInt32}},
			{Name: "name", Type: nettrace.FieldType{Code: nettrace.TypeString}},
			{Name: "pt", Type: nettrace.FieldType{Code: nettrace.TypeObject, Fields: []nettrace.Field{{Name: "x", Type: nettrace.FieldType{Code: nettrace.TypeDouble}}}}},
		},
	}
	RandomArray = &nettrace.Metadata{
		Provider: "My-Source", EventID: 4, EventName: "Batch", HasFields: true,
		Fields: []nettrace.Field{{Name: "items", Type: nettrace.FieldType{Code: nettrace.TypeArray, Elem: &nettrace.FieldType{Code: nettrace.TypeObject, Fields: []nettrace.Field{
			{Name: "a", Type: nettrace.FieldType{Code: nettrace.TypeUInt64}}, {Name: "b", Type: nettrace.FieldType{Code: nettrace.TypeGUID}},
		}}}}},
	}
)

// Random is n events for tests of the format itself (the writer's
// batching, sorting and sequence points; the reader's merge, truncation
// and filters), not of an analysis: on the given number of capture
// threads, strictly increasing timestamps from 5000, unique payloads ("EV"
// + index, then filler), stacks from a pool of 20, activity ids on a
// quarter; samples are about one of 8 other threads. The same seed gives
// the same events.
func Random(n, threads int, seed uint64) []nettrace.Event {
	rng := rand.New(rand.NewPCG(seed, 1))
	var stacks [][]uint64
	for i := 0; i < 20; i++ {
		st := make([]uint64, 1+rng.IntN(30))
		for j := range st {
			st[j] = 0x7f0000000000 + rng.Uint64N(1<<30)
		}
		stacks = append(stacks, st)
	}
	metas := []*nettrace.Metadata{RandomSample, RandomCustom, RandomArray}
	evs := make([]nettrace.Event, n)
	ts := int64(5000)
	for i := range evs {
		ts += 1 + int64(rng.IntN(50))
		capture := uint64(100 + rng.IntN(threads))
		e := nettrace.Event{
			Meta: metas[rng.IntN(len(metas))], Timestamp: ts, ThreadID: capture, CaptureThreadID: capture,
			ProcessorNumber: uint32(rng.IntN(4)),
			Payload:         fmt.Appendf(nil, "EV%06d%s", i, bytes.Repeat([]byte{'x'}, rng.IntN(40))),
		}
		if e.Meta == RandomSample {
			e.ThreadID = uint64(500 + rng.IntN(8)) // samples are about another thread
		}
		if rng.IntN(3) > 0 {
			e.Stack = stacks[rng.IntN(len(stacks))]
		}
		if rng.IntN(4) == 0 {
			e.ActivityID[0], e.ActivityID[15] = byte(i), 1
			if rng.IntN(2) == 0 {
				e.RelatedActivityID[3] = byte(i >> 3)
			}
		}
		evs[i] = e
	}
	return evs
}
