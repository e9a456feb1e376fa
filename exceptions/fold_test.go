package exceptions

import (
	"testing"
	"unicode/utf16"

	"github.com/clrspy/clrspy/nettrace"
)

func utf16z(s string) []byte {
	var b []byte
	for _, u := range utf16.Encode([]rune(s)) {
		b = append(b, byte(u), byte(u>>8))
	}
	return append(b, 0, 0)
}

func TestFold(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"order 42 not found", "order <n> not found"},
		{"order 1,234.50 due 12:30:01", "order <n> due <n>"},
		{"bad token at 0x00ff", "bad token at <hex>"},
		{"request 3f2504e0-4f89-11d3-9a0c-0305e82c3301 timed out", "request <guid> timed out"},
		{"object deadbeef12 freed", "object <hex> freed"},
		{"user u123456 denied", "user <id> denied"},
		{"Value was either too large or too small for an Int32.", "Value was either too large or too small for an Int32."},
		{"Ünïcode 7 ☃ 𝄞", "Ünïcode <n> ☃ 𝄞"},
		{"", ""},
	} {
		if got := string(Fold(nil, utf16z(tc.in))); got != tc.want {
			t.Errorf("Fold(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	long := make([]byte, 0, 1000)
	for range 500 {
		long = append(long, 'a', 0, ' ', 0)
	}
	if got := Fold(nil, long); len(got) > MaxPatternBytes+len("…") {
		t.Errorf("a long message folds to %d bytes", len(got))
	}
}

// TestThrowDoesNotAllocate: a throw of a known type, message pattern and
// stack, and its catch and end, cost no allocation (AllocsPerRun runs
// the feed once more than asked, to warm up: 102 exceptions in all).
func TestThrowDoesNotAllocate(t *testing.T) {
	hdr := &nettrace.Header{PointerSize: 8, QPCFrequency: 1e9}
	a := New(hdr, Options{})
	thrown := append(append(utf16z("System.InvalidOperationException"), utf16z("order 7 not found")...), make([]byte, 8+4+2+2)...)
	catch := append(make([]byte, 16), append(utf16z("void [W] W.C::M()"), 0, 0)...)
	ev := func(id uint32, v uint32, p []byte, stack []uint64) *nettrace.Event {
		return &nettrace.Event{Meta: &nettrace.Metadata{Runtime: nettrace.Runtime, EventID: id, Version: v}, Payload: p, Stack: stack, ThreadID: 5, Timestamp: 10}
	}
	evs := []*nettrace.Event{ev(80, 1, thrown, []uint64{1, 2, 3}), ev(250, 0, catch, nil), ev(251, 0, nil, nil), ev(256, 0, nil, nil)}
	feed := func() {
		for _, e := range evs {
			a.Event(e)
		}
	}
	feed()
	if n := testing.AllocsPerRun(100, feed); n != 0 {
		t.Errorf("%v allocations per exception", n)
	}
	r := a.Result()
	if r.Thrown != 102 || r.Caught != 102 || r.Types[0].CatchSites[0].Site != "W.C.M()" {
		t.Errorf("%+v %+v", *r, r.Types)
	}
}
