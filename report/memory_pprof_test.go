package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/clrspy/clrspy/memory"
)

// nativeFixture: two stacks outstanding (LeakHGlobal's the larger), one
// of them and a third allocated, a fraction in every estimate (the JSON
// rounds them).
func nativeFixture() *MemoryNativeJSON {
	hg := []string{"malloc", "NativeMemory.Alloc", "NativeLeak.LeakHGlobal", "NativeLeak.Main"}
	lm := []string{"malloc", "NativeLeak.LeakMalloc", "NativeLeak.Main"}
	tmp := []string{"malloc", "libfoo.so!make_buffer", "Foo;Bar.Run"}
	return NewMemoryNative(&memory.NativeResult{
		SampleBytes: 16384,
		Outstanding: []memory.NativeStack{
			{Frames: hg, Bytes: 67108864.4, Count: 4096.6},
			{Frames: lm, Bytes: 33554431.5, Count: 2048.2},
		},
		Allocated: []memory.NativeStack{
			{Frames: hg, Bytes: 67108864.4, Count: 4096.6},
			{Frames: tmp, Bytes: 40000000.7, Count: 10.4},
			{Frames: lm, Bytes: 33554431.5, Count: 2048.2},
		},
	})
}

// sampleFrames is a sample's function names, leaf first.
func sampleFrames(s *profile.Sample) []string {
	var f []string
	for _, l := range s.Location {
		for _, ln := range l.Line {
			f = append(f, ln.Function.Name)
		}
	}
	return f
}

// TestMemoryNativePprof: a profile built from a memory.NativeResult and
// read back by pprof's parser: Go's heap sample types with inuse_space
// the default, one sample per stack (the union of both lists) with the
// JSON's rounded values, the frames leaf first, one function per name.
func TestMemoryNativePprof(t *testing.T) {
	n := nativeFixture()
	var b bytes.Buffer
	if err := WriteMemoryNativePprof(&b, n, 10e9, []string{"native: 3 allocator records lost"}); err != nil {
		t.Fatal(err)
	}
	if b.Len() < 2 || b.Bytes()[0] != 0x1f || b.Bytes()[1] != 0x8b {
		t.Fatalf("not gzipped: % x", b.Bytes()[:min(4, b.Len())])
	}
	p, err := profile.Parse(&b)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, st := range p.SampleType {
		types = append(types, st.Type+"/"+st.Unit)
	}
	if got := strings.Join(types, ","); got != "alloc_objects/count,alloc_space/bytes,inuse_objects/count,inuse_space/bytes" {
		t.Errorf("sample types %s", got)
	}
	if p.DefaultSampleType != "inuse_space" || p.Period != 16384 || p.DurationNanos != 10e9 {
		t.Errorf("default %q, period %d, duration %d", p.DefaultSampleType, p.Period, p.DurationNanos)
	}
	if len(p.Comments) != 2 || !strings.Contains(p.Comments[0], "every 16384 bytes") || p.Comments[1] != "native: 3 allocator records lost" {
		t.Errorf("comments %q", p.Comments)
	}
	want := []struct {
		frames string
		values []int64
	}{
		{"malloc NativeMemory.Alloc NativeLeak.LeakHGlobal NativeLeak.Main", []int64{4097, 67108864, 4097, 67108864}},
		{"malloc NativeLeak.LeakMalloc NativeLeak.Main", []int64{2048, 33554432, 2048, 33554432}},
		{"malloc libfoo.so!make_buffer Foo;Bar.Run", []int64{10, 40000001, 0, 0}},
	}
	if len(p.Sample) != len(want) {
		t.Fatalf("%d samples, want %d", len(p.Sample), len(want))
	}
	for i, w := range want {
		s := p.Sample[i]
		if got := strings.Join(sampleFrames(s), " "); got != w.frames {
			t.Errorf("sample %d frames %q, want %q", i, got, w.frames)
		}
		for j, v := range w.values {
			if s.Value[j] != v {
				t.Errorf("sample %d %s = %d, want %d", i, p.SampleType[j].Type, s.Value[j], v)
			}
		}
	}
	// The values are the JSON's.
	if n.Outstanding[0].Bytes != p.Sample[0].Value[3] || n.Allocated[1].Bytes != p.Sample[2].Value[1] {
		t.Errorf("JSON %d, %d; profile %d, %d", n.Outstanding[0].Bytes, n.Allocated[1].Bytes, p.Sample[0].Value[3], p.Sample[2].Value[1])
	}
	// malloc and NativeLeak.Main are shared: 7 distinct names.
	if len(p.Function) != 7 || len(p.Location) != 7 {
		t.Errorf("%d functions, %d locations, want 7", len(p.Function), len(p.Location))
	}
	if err := p.CheckValid(); err != nil {
		t.Error(err)
	}
}

// TestMemoryNativeFolded: the outstanding bytes as collapsed stacks,
// root first, byte order; a stack only allocated has no line.
func TestMemoryNativeFolded(t *testing.T) {
	var b bytes.Buffer
	if err := WriteMemoryNativeFolded(&b, nativeFixture()); err != nil {
		t.Fatal(err)
	}
	want := "NativeLeak.Main;NativeLeak.LeakHGlobal;NativeMemory.Alloc;malloc 67108864\n" +
		"NativeLeak.Main;NativeLeak.LeakMalloc;malloc 33554432\n"
	if b.String() != want {
		t.Errorf("folded:\n%s\nwant:\n%s", b.String(), want)
	}
	// A ';' in a name would split the frame: it becomes ':'.
	n := NewMemoryNative(&memory.NativeResult{Outstanding: []memory.NativeStack{{Frames: []string{"malloc", "Foo;Bar.Run"}, Bytes: 10, Count: 1}}})
	b.Reset()
	WriteMemoryNativeFolded(&b, n)
	if b.String() != "Foo:Bar.Run;malloc 10\n" {
		t.Errorf("folded %q", b.String())
	}
	// Nothing outstanding: no lines.
	b.Reset()
	WriteMemoryNativeFolded(&b, &MemoryNativeJSON{})
	if b.Len() != 0 {
		t.Errorf("folded %q, want nothing", b.String())
	}
}
