package clrevents_test

import (
	"bytes"
	"math"
	"reflect"
	"testing"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/internal/tracegen"
	"github.com/clrspy/clrspy/nettrace"
)

// filler draws field values from fuzz bytes (zeros once they run out).
type filler struct{ b []byte }

func (f *filler) byte() byte {
	if len(f.b) == 0 {
		return 0
	}
	c := f.b[0]
	f.b = f.b[1:]
	return c
}

func (f *filler) uint(bits int) uint64 {
	var v uint64
	for i := 0; i < bits/8; i++ {
		v |= uint64(f.byte()) << (8 * i)
	}
	return v
}

// runes the strings are made of: ASCII, Latin, CJK and one outside the
// BMP (a surrogate pair in the payload's UTF-16), never NUL (the
// terminator).
var runes = []rune("abcXYZ09 .,<>`[]_é漢😀Ωß\t")

func (f *filler) string() string {
	n := int(f.byte() % 12)
	r := make([]rune, n)
	for i := range r {
		r[i] = runes[int(f.byte())%len(runes)]
	}
	return string(r)
}

// fill sets every number, string and slice of v (a pointer) from f; bools
// are left false (the decoder's flags: each codec says which it sets).
func (f *filler) fill(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		f.fill(v.Elem())
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			f.fill(v.Field(i))
		}
	case reflect.Array:
		for i := 0; i < v.Len(); i++ {
			f.fill(v.Index(i))
		}
	case reflect.Slice:
		n := int(f.byte() % 4)
		if n == 0 {
			return
		}
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := 0; i < n; i++ {
			f.fill(s.Index(i))
		}
		v.Set(s)
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(f.uint(v.Type().Bits()))
	case reflect.Float64:
		v.SetFloat(float64(f.uint(32)) / 8) // never NaN: NaN equals nothing
	case reflect.String:
		v.SetString(f.string())
	}
}

// codec is one tracegen encoder and the event its payload is for.
type codec struct {
	p   nettrace.ProviderKind
	ids []uint32
	// encode fills a value from f, fixes what the payload does not carry
	// to what the decoder gives, and returns it with its encoding; enc
	// encodes a decoded value again.
	encode func(f *filler) (any, []byte)
	enc    func(v any) []byte
}

func mk[T any](p nettrace.ProviderKind, ids []uint32, fix func(*T), enc func([]byte, T) []byte) codec {
	return codec{p: p, ids: ids,
		encode: func(f *filler) (any, []byte) {
			var v T
			f.fill(reflect.ValueOf(&v))
			if fix != nil {
				fix(&v)
			}
			return v, enc(nil, v)
		},
		enc: func(v any) []byte { return enc(nil, v.(T)) },
	}
}

var rt = nettrace.Runtime

// codecs are tracegen's encoders, each with the events it writes.
var codecs = []codec{
	mk(rt, []uint32{clrevents.IDGCStart}, nil, tracegen.AppendGCStart),
	mk(rt, []uint32{clrevents.IDGCEnd}, nil, tracegen.AppendGCEnd),
	mk(rt, []uint32{clrevents.IDGCSuspendEEBegin}, nil, tracegen.AppendSuspendEEBegin),
	mk(rt, []uint32{clrevents.IDGCSuspendEEEnd, clrevents.IDGCRestartEEBegin, clrevents.IDGCRestartEEEnd},
		func(e *clrevents.GCNoUserData) { e.ClrInstanceID = 0 },
		func(b []byte, _ clrevents.GCNoUserData) []byte { return tracegen.AppendClrInstance(b) }),
	mk(rt, []uint32{clrevents.IDGCHeapStats}, func(e *clrevents.GCHeapStats) { e.HasPOH = true }, tracegen.AppendGCHeapStats),
	mk(rt, []uint32{clrevents.IDGCTriggered}, nil, tracegen.AppendGCTriggered),
	mk(rt, []uint32{clrevents.IDGCAllocationTick}, func(e *clrevents.AllocationTick) {
		e.HasType, e.HasAddress, e.HasSize = true, true, true
	}, tracegen.AppendAllocationTick),
	mk(rt, []uint32{clrevents.IDContentionStart}, func(e *clrevents.ContentionStart) { e.HasLock = true }, tracegen.AppendContentionStart),
	mk(rt, []uint32{clrevents.IDContentionStop}, func(e *clrevents.ContentionStop) { e.HasDuration = true }, tracegen.AppendContentionStop),
	mk(rt, []uint32{clrevents.IDThreadCreated}, nil, tracegen.AppendThread),
	mk(nettrace.Rundown, []uint32{clrevents.IDRundownThreadDC}, nil, tracegen.AppendThread),
	mk(rt, []uint32{clrevents.IDMethodLoadVerbose, clrevents.IDMethodUnloadVerbose}, func(m *clrevents.Method) { m.Verbose = true }, tracegen.AppendMethodVerbose),
	mk(nettrace.Rundown, []uint32{clrevents.IDRundownMethodDCStartVerbose, clrevents.IDRundownMethodDCEndVerbose},
		func(m *clrevents.Method) { m.Verbose = true }, tracegen.AppendMethodVerbose),
	mk(nettrace.SampleProfiler, []uint32{clrevents.IDThreadSample}, nil, tracegen.AppendThreadSample),
	mk(rt, []uint32{clrevents.IDGCBulkMovedObjectRanges}, nil, func(b []byte, e clrevents.BulkMovedRanges) []byte {
		return tracegen.AppendBulkMovedRanges(b, e.Index, e.Ranges)
	}),
	mk(rt, []uint32{clrevents.IDGCBulkSurvivingObjectRanges}, nil, func(b []byte, e clrevents.BulkSurvivingRanges) []byte {
		return tracegen.AppendBulkSurvivingRanges(b, e.Index, e.Ranges)
	}),
	mk(rt, []uint32{clrevents.IDGCGenerationRange}, nil, tracegen.AppendGenerationRange),
	mk(rt, []uint32{clrevents.IDBulkType}, nil, func(b []byte, e clrevents.BulkType) []byte {
		return tracegen.AppendBulkType(b, e.Types...)
	}),
	mk(rt, []uint32{clrevents.IDGCSampledObjectAllocHigh, clrevents.IDGCSampledObjectAllocLow}, nil, tracegen.AppendSampledObjectAllocation),
	mk(rt, []uint32{clrevents.IDAllocationSampled}, nil, tracegen.AppendAllocationSampled),
}

// FuzzEncodeDecode checks tracegen's encoders against the decoders: a
// value encoded for an event decodes, at the version the spec table gives
// for it, to the same value, and encodes again to the same bytes. An
// encoder left behind when a decoder moves to a newer version (or a
// layout written twice, differently) fails here, not in a test's figures.
func FuzzEncodeDecode(f *testing.F) {
	for i := range codecs {
		f.Add(uint8(i), []byte{})
		f.Add(uint8(i), []byte("\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a"))
		f.Add(uint8(i), bytes.Repeat([]byte{0xff}, 200))
	}
	f.Fuzz(func(t *testing.T, which uint8, material []byte) {
		c := codecs[int(which)%len(codecs)]
		want, payload := c.encode(&filler{b: material})
		for _, id := range c.ids {
			s := clrevents.Lookup(c.p, id)
			v, ok := s.Version()
			if !ok {
				t.Fatalf("%v %d: no decoder in the spec table", c.p, id)
			}
			ev := &nettrace.Event{Meta: &nettrace.Metadata{Provider: c.p.Name(), Runtime: c.p, EventID: id, Version: v, Name: s.Name}, Payload: payload}
			got, err := clrevents.Decode(ev, 8)
			if err != nil {
				t.Fatalf("%s v%d: %v (payload %x)", s.Name, v, err, payload)
			}
			if !reflect.DeepEqual(nilEmpty(got), nilEmpty(want)) {
				t.Fatalf("%s v%d: encoded %+v, decoded %+v", s.Name, v, want, got)
			}
			if again := c.enc(got); !bytes.Equal(again, payload) {
				t.Fatalf("%s v%d: %x encodes again as %x", s.Name, v, payload, again)
			}
		}
	})
}

// TestEncodersCovered: every encoder's events are in the spec table with
// a decoder, and the whole 64-bit and string range survives (values the
// seeds alone would not reach).
func TestEncodersCovered(t *testing.T) {
	for i, c := range codecs {
		for _, id := range c.ids {
			if _, ok := clrevents.Lookup(c.p, id).Version(); !ok {
				t.Errorf("codec %d: %v %d has no decoder", i, c.p, id)
			}
		}
	}
	e := clrevents.AllocationTick{AllocationAmount: math.MaxUint64, TypeName: "Sys.😀[]", HasType: true, HasAddress: true, HasSize: true, Address: 1 << 63}
	ev := &nettrace.Event{Meta: &nettrace.Metadata{Runtime: rt, EventID: clrevents.IDGCAllocationTick, Version: 4}, Payload: tracegen.AppendAllocationTick(nil, e)}
	if got, err := clrevents.Decode(ev, 8); err != nil || !reflect.DeepEqual(got, e) {
		t.Errorf("allocation tick: %+v (%v), want %+v", got, err, e)
	}
}

// nilEmpty is v with its empty slices nil (a decoder may make an empty
// one where the value had none).
func nilEmpty(v any) any {
	p := reflect.New(reflect.TypeOf(v))
	p.Elem().Set(reflect.ValueOf(v))
	clearEmpty(p.Elem())
	return p.Elem().Interface()
}

func clearEmpty(v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			clearEmpty(v.Field(i))
		}
	case reflect.Slice:
		if v.Len() == 0 {
			v.Set(reflect.Zero(v.Type()))
			return
		}
		c := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		reflect.Copy(c, v)
		for i := 0; i < c.Len(); i++ {
			clearEmpty(c.Index(i))
		}
		v.Set(c)
	}
}
