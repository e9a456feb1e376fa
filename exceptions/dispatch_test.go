package exceptions

import (
	"testing"

	"github.com/clrspy/clrspy/nettrace"
)

// TestDispatch follows the event sequences .NET 10 sends (recorded from a
// test program): a rethrow (throw;) sends no new ExceptionThrown, only a
// second catch; a throw from a catch block sends no stop for the exception
// that catch had caught; an unhandled exception gets a filter (the
// runtime's own) and no stop before the process ends.
func TestDispatch(t *testing.T) {
	hdr := &nettrace.Header{PointerSize: 8, QPCFrequency: 1e9}
	a := New(hdr, Options{})
	payload := func(typ string) []byte {
		return append(append(utf16z(typ), utf16z("m")...), make([]byte, 16)...)
	}
	handler := func(m string) []byte { return append(make([]byte, 16), append(utf16z(m), 0, 0)...) }
	seq := []struct {
		id  uint32
		tid uint64
		p   []byte
	}{
		// Rethrow: IOE caught in Rethrower, rethrown, caught in Outer1.
		{80, 1, payload("IOE")}, {250, 1, handler("void [a] P::Rethrower()")}, {250, 1, handler("void [a] P::Outer1()")}, {251, 1, nil}, {256, 1, nil},
		// Wrap: IOE caught in Wrapper, which throws AppEx, caught in Outer2.
		{80, 1, payload("IOE")}, {250, 1, handler("void [a] P::Wrapper()")}, {80, 1, payload("AppEx")}, {250, 1, handler("void [a] P::Outer2()")}, {251, 1, nil}, {256, 1, nil},
		// A throw caught inside a catch block: the outer catch ends later.
		{80, 1, payload("IOE")}, {250, 1, handler("void [a] P::Outer3()")}, {80, 1, payload("AppEx")}, {250, 1, handler("void [a] P::Inner3()")}, {251, 1, nil}, {256, 1, nil}, {251, 1, nil}, {256, 1, nil},
		// Unhandled on thread 2: the runtime's filter, then nothing.
		{80, 2, payload("IOE")}, {254, 2, handler("bool [c] T::Filter()")}, {255, 2, nil},
	}
	for _, e := range seq {
		v := uint32(0)
		if e.id == 80 {
			v = 1 // ExceptionThrown_V1
		}
		a.Event(&nettrace.Event{Meta: &nettrace.Metadata{Runtime: nettrace.Runtime, EventID: e.id, Version: v}, Payload: e.p, ThreadID: e.tid})
	}
	r := a.Result()
	if r.Thrown != 6 || r.Caught != 5 || r.Uncaught != 0 || r.Open != 1 || r.Filters != 1 ||
		r.CatchesWithoutThrow != 0 || r.StopsWithoutThrow != 0 {
		t.Fatalf("%+v", *r)
	}
	sites := map[string]int64{}
	for _, ty := range r.Types {
		for _, c := range ty.CatchSites {
			sites[ty.Name+" "+c.Site] = c.Count
		}
	}
	want := map[string]int64{"IOE P.Rethrower()": 1, "IOE P.Outer1()": 1, "IOE P.Wrapper()": 1, "AppEx P.Outer2()": 1,
		"IOE P.Outer3()": 1, "AppEx P.Inner3()": 1}
	if len(sites) != len(want) {
		t.Errorf("catch sites %v", sites)
	}
	for k, n := range want {
		if sites[k] != n {
			t.Errorf("catch sites %v, want %v", sites, want)
			break
		}
	}
}
