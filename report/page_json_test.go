package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// The page's data written field by field is json.Marshal's, byte for byte:
// on the fixtures' pages (GC rows, flame graph, locks, heap, omitted
// sections) and on a struct with what the stream must leave to json
// (omitted and renamed fields, nil pointers, a pointer-receiver marshaler,
// an embedded struct, options other than omitempty).
func TestPageJSONStreamIsMarshal(t *testing.T) {
	type inner struct {
		A int `json:"a,omitempty"`
		B string
	}
	type embeds struct {
		inner
		C int `json:"c"`
	}
	type withString struct {
		N int64 `json:"n,string"`
	}
	type odd struct {
		Str   withString   `json:"str"`
		Empty []int        `json:"empty,omitempty"`
		Skip  int          `json:"-"`
		Ptr   *inner       `json:"ptr"`
		Nil   *inner       `json:"nil"`
		NilOm *inner       `json:"nil_om,omitempty"`
		Col   numCol       `json:"col"`
		Emb   embeds       `json:"emb"`
		Deep  *odd         `json:"deep,omitempty"`
		Esc   string       `json:"esc"`
		F     float64      `json:"f,omitempty"`
		PM    ptrMarshaler `json:"pm"`
		I32   []int32      `json:"i32"`
		NilI  []int        `json:"nil_i"`
		U64   []uint64     `json:"u64"`
		Bytes []uint8      `json:"bytes"`
		Arr   [3]uint8     `json:"arr"`
		Cols  [2]numCol    `json:"cols"`
		NilC  numCol       `json:"nil_c"`
		Self  []selfInt    `json:"self"`
		I8    int8         `json:"i8"`
		U     uint         `json:"u"`
		hid   int
	}
	values := []any{
		&odd{Str: withString{7}, Skip: 1, Ptr: &inner{B: "<b>"}, Col: numCol{1.23456, nan()}, Emb: embeds{inner{1, "x"}, 2},
			Deep: &odd{Esc: "&"}, Esc: "</script>", hid: 3,
			I32: []int32{-1, 2}, U64: []uint64{1 << 63}, Bytes: []byte{1, 2}, Arr: [3]uint8{1, 2, 3},
			Cols: [2]numCol{{0.0005, 1e21}, nil}, Self: []selfInt{1, 2}, I8: -3, U: 7},
		&LivePage{Title: "t"},
	}
	for _, name := range []string{"composite.nettrace", "heap-alloc.nettrace", "gc-server.nettrace", "cpu.nettrace"} {
		values = append(values, pageOf(t, name))
	}
	for i, v := range values {
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		w := bufio.NewWriter(&got)
		if err := writeJSONStream(w, reflect.ValueOf(v), pageJSONDepth); err != nil {
			t.Fatal(err)
		}
		w.Flush()
		if !bytes.Equal(got.Bytes(), want) {
			n := 0
			for n < min(got.Len(), len(want)) && got.Bytes()[n] == want[n] {
				n++
			}
			t.Errorf("value %d (%T): differs at byte %d of %d:\n got  %.200s\n want %.200s", i, v, n, len(want), got.Bytes()[n:], want[n:])
		}
	}
	if b := string(mustMarshal(t, values[0])); !strings.Contains(b, `"deep":{`) || !strings.Contains(b, `"pm":"ptr"`) || !streamable(reflect.TypeOf(values[0])) {
		t.Errorf("the test struct is not encoded as the test means: %s", b)
	}
}

// ptrMarshaler marshals itself only where it is addressable (a field).
type ptrMarshaler struct{ X int }

func (p *ptrMarshaler) MarshalJSON() ([]byte, error) { return []byte(`"ptr"`), nil }

// selfInt marshals itself.
type selfInt int

func (s selfInt) MarshalJSON() ([]byte, error) { return []byte(`"s` + strconv.Itoa(int(s)) + `"`), nil }

func nan() float64 { var z float64; return z / z }

func mustMarshal(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
