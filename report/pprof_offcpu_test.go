package report

import (
	"bytes"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/clrspy/clrspy/stacks"
)

// TestPprofOffCPU writes a wall-clock profile (one CPU sample, one
// off-CPU entry) and reads it back with google/pprof: sample types
// samples, cpu, off_cpu and wall, each entry's time in its own state's
// value and in wall, the state label, wall the default.
func TestPprofOffCPU(t *testing.T) {
	p := &stacks.Profile{
		Frames:  []stacks.Frame{{Name: "Run", Kind: stacks.KindManaged}, {Name: "schedule", Module: "[kernel]", Kind: stacks.KindKernel}},
		Threads: []stacks.Thread{{ID: 7, Name: "worker"}},
		Samples: []stacks.Sample{
			{Thread: 0, Stack: []int32{0}, Count: 3, Nanos: 30_000_000},
			{Thread: 0, Stack: []int32{1, 0}, Count: 2, Nanos: 500_000_000, OffCPU: true},
		},
		PeriodNanos: 10_000_000, CPUTime: true, OffCPU: true, Total: 3,
	}
	var buf bytes.Buffer
	if err := WritePprof(&buf, p); err != nil {
		t.Fatal(err)
	}
	pp, err := profile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, st := range pp.SampleType {
		types = append(types, st.Type+"/"+st.Unit)
	}
	if got := len(types); got != 4 || types[0] != "samples/count" || types[1] != "cpu/nanoseconds" || types[2] != "off_cpu/nanoseconds" || types[3] != "wall/nanoseconds" {
		t.Fatalf("sample types %v", types)
	}
	if pp.DefaultSampleType != "wall" || pp.PeriodType.Type != "cpu" {
		t.Errorf("default %q, period type %v", pp.DefaultSampleType, pp.PeriodType)
	}
	want := map[string][]int64{"on_cpu": {3, 30_000_000, 0, 30_000_000}, "off_cpu": {2, 0, 500_000_000, 500_000_000}}
	for _, s := range pp.Sample {
		st := s.Label["state"]
		if len(st) != 1 {
			t.Fatalf("sample %v without one state label", s.Value)
		}
		w := want[st[0]]
		if len(s.Value) != 4 || s.Value[0] != w[0] || s.Value[1] != w[1] || s.Value[2] != w[2] || s.Value[3] != w[3] {
			t.Errorf("state %s: values %v, want %v", st[0], s.Value, w)
		}
		delete(want, st[0])
	}
	if len(want) != 0 {
		t.Errorf("states missing: %v", want)
	}
}
