package report

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/stacks"
)

// TestSpeedscopeOneFramePerMethod: on fixtures whose methods ran in
// several code versions (tier-0 and tier-1 bodies, OSR), both speedscope
// documents (sampled and evented) have one frame per name and module, as
// the folded output and the page's flame merge them; pprof has one
// function per method and a location per code version; and the sampled
// document gives each method the thread time the profile's frames of that
// method have together (no time lost or counted twice by the merge).
func TestSpeedscopeOneFramePerMethod(t *testing.T) {
	type method struct{ name, module string }
	for _, name := range []string{"composite.nettrace", "cpu.nettrace", "recursion.nettrace"} {
		t.Run(name, func(t *testing.T) {
			r := tracetest.Open(t, name, nettrace.NewReader)
			ev, err := NewEventedSpeedscope(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			defer ev.Close()
			b := stacks.New(r.Header(), stacks.Options{OnSample: ev.Sample})
			if err := tracetest.ReadAll(t, r, b.Event); err != nil {
				t.Fatal(err)
			}
			p := b.Result()
			// The fixture must have methods with several code versions, or
			// the test proves nothing.
			versions := map[method]int{}
			for _, f := range p.Frames {
				versions[method{f.Name, f.Module}]++
			}
			if len(versions) == len(p.Frames) {
				t.Fatalf("%d frames, all of different methods: no code versions to merge", len(p.Frames))
			}
			var sampled, evented bytes.Buffer
			if err := WriteSpeedscope(&sampled, p, name); err != nil {
				t.Fatal(err)
			}
			if err := ev.Write(&evented, b, p, name); err != nil {
				t.Fatal(err)
			}
			var sd ssFile
			var ed evFile
			if err := json.Unmarshal(sampled.Bytes(), &sd); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(evented.Bytes(), &ed); err != nil {
				t.Fatal(err)
			}
			for doc, frames := range map[string][]ssFrame{"sampled": sd.Shared.Frames, "evented": ed.Shared.Frames} {
				seen := map[method]bool{}
				for _, f := range frames {
					k := method{f.Name, f.File}
					if seen[k] {
						t.Errorf("%s: two frames %q in %q", doc, f.Name, f.File)
					}
					seen[k] = true
				}
				if len(frames) != len(versions) {
					t.Errorf("%s: %d frames, %d methods (%d code versions)", doc, len(frames), len(versions), len(p.Frames))
				}
			}
			// pprof: a location per code version (its own address), a
			// function per method.
			var pb bytes.Buffer
			if err := WritePprof(&pb, p); err != nil {
				t.Fatal(err)
			}
			pp, err := profile.Parse(&pb)
			if err != nil {
				t.Fatal(err)
			}
			if err := pp.CheckValid(); err != nil {
				t.Fatal(err)
			}
			fns := map[method]bool{}
			for _, f := range pp.Function {
				k := method{f.Name, f.Filename}
				if fns[k] {
					t.Errorf("pprof: two functions %q in %q", f.Name, f.Filename)
				}
				fns[k] = true
			}
			if len(pp.Function) != len(versions) || len(pp.Location) != len(p.Frames) {
				t.Errorf("pprof: %d functions, %d locations; want %d methods, %d code versions", len(pp.Function), len(pp.Location), len(versions), len(p.Frames))
			}
			for i, l := range pp.Location {
				if f := p.Frames[i]; l.Address != f.Address || l.Line[0].Function.Name != f.Name {
					t.Errorf("pprof location %d: %#x %s, frame %#x %s", l.ID, l.Address, l.Line[0].Function.Name, f.Address, f.Name)
				}
			}
			// Thread time per method: the profile's (a method counted once
			// per sample, whichever versions the stack holds) against the
			// sampled document's.
			want, got := map[method]int64{}, map[method]int64{}
			for _, s := range p.Samples {
				seen := map[method]bool{}
				for _, fr := range s.Stack {
					k := method{p.Frames[fr].Name, p.Frames[fr].Module}
					if !seen[k] {
						want[k] += s.Nanos
						seen[k] = true
					}
				}
			}
			for _, pr := range sd.Profiles {
				for i, st := range pr.Samples {
					seen := map[int32]bool{}
					for _, fr := range st {
						if !seen[fr] {
							got[method{sd.Shared.Frames[fr].Name, sd.Shared.Frames[fr].File}] += pr.Weights[i]
							seen[fr] = true
						}
					}
				}
			}
			if len(got) != len(want) {
				t.Errorf("%d methods in the document, %d in the profile", len(got), len(want))
			}
			for k, ns := range want {
				if got[k] != ns {
					t.Errorf("%s: %d ns in the document, %d in the profile", k.name, got[k], ns)
				}
			}
		})
	}
}
