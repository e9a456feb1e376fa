package perf

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/clrmeta"
	"github.com/clrspy/clrspy/internal/procfs"
	"github.com/clrspy/clrspy/internal/workload"
	"github.com/clrspy/clrspy/stacks"
)

// TestBuilderNamesR2RWithoutEvents: with no method events at all (no
// EventPipe session), a sample in CoreLib's precompiled code of a live
// process is named from the module file (managed, CoreLib's), not
// System.Private.CoreLib.dll+0xOFFSET.
func TestBuilderNamesR2RWithoutEvents(t *testing.T) {
	w := workload.Start(t, nil, "framework", "seconds=30")
	text, err := procfs.MapsText(w.Pid)
	if err != nil {
		t.Fatal(err)
	}
	var lib string
	var exec []procfs.Mapping
	for _, m := range procfs.ParseMaps(text) {
		if filepath.Base(m.Path) == "System.Private.CoreLib.dll" && m.Exec() {
			lib = m.Path
			exec = append(exec, m)
		}
	}
	if lib == "" {
		t.Fatal("no executable mapping of System.Private.CoreLib.dll")
	}
	r2r, err := clrmeta.OpenR2RMethods(lib)
	if err != nil {
		t.Fatal(err)
	}
	const name = "System.String.ReplaceHelper(int32,class System.String,value class System.ReadOnlySpan`1<int32>)"
	start, end, ok := r2r.Body(name)
	if !ok {
		t.Fatalf("no ReadyToRun body %s", name)
	}
	off, _ := r2r.FileOffset(start + (end-start)/2)
	var addr uint64
	for _, m := range exec {
		if off >= m.Offset && off < m.Offset+(m.End-m.Start) {
			addr = m.Start + off - m.Offset
		}
	}
	if addr == 0 {
		t.Fatalf("file offset %#x in no executable mapping", off)
	}
	b, err := NewBuilder(w.Pid, nil, nil, BuilderOptions{Hz: 1000})
	if err != nil {
		t.Fatal(err)
	}
	b.Sample(&Sample{Tid: w.Pid, Time: b.monoStart + 1e6, Period: 1e6, User: []uint64{addr}})
	b.Finish()
	p := b.Result()
	var got []stacks.Frame
	for _, f := range p.Frames {
		if f.Module == "System.Private.CoreLib.dll" || strings.Contains(f.Name, "CoreLib") {
			got = append(got, f)
		}
	}
	if len(got) != 1 || got[0].Name != name || got[0].Kind != stacks.KindManaged {
		t.Errorf("CoreLib frames %+v, want one managed %s", got, name)
	}
}
