package triage

import (
	"reflect"
	"testing"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/stacks"
)

// TestTopLeafMethods: the one list of top methods, from a perf profile
// (no sample type, an off-CPU sample) and the runtime sampler's (managed
// and external samples) alike: leaf frames only, argument lists dropped,
// time off the CPU and unnamed leaves left out, shares of the rest,
// heaviest first and then by name, cut at n.
func TestTopLeafMethods(t *testing.T) {
	p := &stacks.Profile{
		Frames: []stacks.Frame{
			{Name: "App.Hot(int32)", Kind: stacks.KindManaged},
			{Name: "App.Main(string[])", Kind: stacks.KindManaged},
			{Name: "memmove", Module: "libc.so.6", Kind: stacks.KindNative},
			{Name: stacks.UnknownFrame, Kind: stacks.KindUnknown},
			{Name: stacks.NativeFrame, Kind: stacks.KindNative},
			{Name: "App.Warm()", Kind: stacks.KindManaged},
		},
		Samples: []stacks.Sample{
			{Stack: []int32{0, 1}, Count: 50},                                // perf: App.Hot
			{Stack: []int32{2, 0, 1}, Count: 20},                             // perf: memmove under App.Hot
			{Stack: []int32{0, 1}, Count: 30, Type: clrevents.SampleManaged}, // the runtime's sampler
			{Stack: []int32{5, 1}, Count: 20, Type: clrevents.SampleManaged},
			{Stack: []int32{1}, Count: 500, OffCPU: true},                      // asleep
			{Stack: []int32{4, 1}, Count: 900, Type: clrevents.SampleExternal}, // waiting in native code
			{Stack: []int32{3, 1}, Count: 7},                                   // no name
			{Stack: nil, Count: 3},
		},
	}
	got := TopLeafMethods(p, 5)
	want := []Method{{Name: "App.Hot", Pct: 66.66666666666667}, {Name: "App.Warm", Pct: 16.666666666666668}, {Name: "memmove", Pct: 16.666666666666668}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("top methods %+v, want %+v", got, want)
	}
	if got := TopLeafMethods(p, 1); len(got) != 1 || got[0].Name != "App.Hot" {
		t.Errorf("top 1 %+v", got)
	}
	if got := TopLeafMethods(&stacks.Profile{}, 5); len(got) != 0 {
		t.Errorf("no samples: %+v", got)
	}
}
