package stacks

import (
	"testing"

	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/nettrace"
)

// build reads the whole trace at path through a Builder; it must end
// cleanly and every payload must decode.
func build(t testing.TB, path string, opts Options) *Profile {
	t.Helper()
	r := tracetest.OpenFile(t, path, nettrace.NewReader)
	b := New(r.Header(), opts)
	if err := tracetest.ReadAll(t, r, b.Event); err != nil {
		t.Fatal(err)
	}
	if st := b.Stats(); st.DecodeErrors != 0 {
		t.Fatalf("%d payloads did not decode, first: %v", st.DecodeErrors, st.FirstError)
	}
	p := b.Result()
	if err := p.CheckValid(); err != nil {
		t.Errorf("%s: %v", path, err)
	}
	return p
}

// frameCounts sums sample counts per frame name (inclusive: once per
// sample even if the frame recurs) and per leaf.
func frameCounts(p *Profile) (incl, leaf map[string]int64) {
	incl, leaf = map[string]int64{}, map[string]int64{}
	for i := range p.Samples {
		s := &p.Samples[i]
		seen := map[string]bool{}
		for j, f := range s.Stack {
			n := p.Frames[f].Name
			if j == 0 {
				leaf[n] += s.Count
			}
			if !seen[n] {
				incl[n] += s.Count
				seen[n] = true
			}
		}
	}
	return
}
