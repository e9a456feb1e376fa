package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/memory"
)

// TestMemoryNative: Native's result in the document (estimates rounded,
// frames leaf first), its JSON keys, and the text's top stacks.
func TestMemoryNative(t *testing.T) {
	r := &memory.NativeResult{
		SampleBytes: 16384,
		Outstanding: []memory.NativeStack{
			{Frames: []string{"malloc", "NativeMemory.Alloc", "LeakHGlobal"}, Bytes: 67108864.4, Count: 4096.6},
			{Frames: []string{"malloc", "LeakMalloc"}, Bytes: 1 << 20, Count: 64},
		},
		Allocated: []memory.NativeStack{{Frames: []string{"malloc", "x"}, Bytes: 3 << 20, Count: 3}},
	}
	d := &MemoryDocument{Native: NewMemoryNative(r), Judgement: "flat"}
	var b bytes.Buffer
	if err := WriteMemoryJSON(&b, d); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Native map[string]json.RawMessage `json:"native"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Native) != 3 || string(doc.Native["sample_bytes"]) != "16384" {
		t.Errorf("native keys: %v", doc.Native)
	}
	var out []map[string]any
	json.Unmarshal(doc.Native["outstanding"], &out)
	if len(out) != 2 || out[0]["bytes"] != float64(67108864) || out[0]["count"] != float64(4097) ||
		strings.Join(toStrings(out[0]["frames"]), ",") != "malloc,NativeMemory.Alloc,LeakHGlobal" {
		t.Errorf("outstanding %v", out)
	}
	b.Reset()
	if err := WriteMemoryText(&b, d, 0); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	for _, want := range []string{
		"native allocations (sampled every 16 KiB on average): 65.0 MiB outstanding, 3.0 MiB allocated (estimates)\n  64.0 MiB in 4097 blocks:\n      malloc\n      NativeMemory.Alloc\n      LeakHGlobal\n  1.0 MiB in 64 blocks:\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	// Records lost: the text says first that the report is partial.
	d.Input = Input{Partial: []string{"native: 3 allocator records lost"}}
	b.Reset()
	WriteMemoryText(&b, d, 0)
	if !strings.HasPrefix(b.String(), "PARTIAL REPORT: native: 3 allocator records lost\n") {
		t.Errorf("partial text starts %q", strings.SplitN(b.String(), "\n", 2)[0])
	}
	// Without --native: no key at all.
	b.Reset()
	WriteMemoryJSON(&b, &MemoryDocument{})
	if strings.Contains(b.String(), `"native"`) {
		t.Errorf("native key without --native:\n%s", b.String())
	}
}

func toStrings(v any) []string {
	var s []string
	l, _ := v.([]any)
	for _, x := range l {
		str, _ := x.(string)
		s = append(s, str)
	}
	return s
}
