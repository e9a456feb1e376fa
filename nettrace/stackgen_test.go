package nettrace

import (
	"bytes"
	"errors"
	"os"
	"slices"
	"testing"

	"github.com/clrspy/clrspy/internal/tracetest"
)

// Within one StackGen a StackID names one list of IPs, on every fixture,
// with the default stack cache and with one so small that it evicts all
// the time (generated trace: stacks on 64 threads, a sequence point every
// 10 MB). Generations move on: the generated trace has several.
func TestStackGenNamesOneStack(t *testing.T) {
	gen := generated(t, 24<<20, 3)
	inputs := map[string][]byte{"generated": gen}
	for _, name := range tracetest.Fixtures(t) {
		b, err := os.ReadFile(tracetest.Path(t, name))
		if err != nil {
			t.Fatal(err)
		}
		inputs[name] = b
	}
	for name, data := range inputs {
		for _, cache := range []int64{0, 64 << 10} {
			r, err := NewReaderOptions(bytes.NewReader(data), Options{StackCacheBytes: cache})
			if err != nil {
				t.Fatal(name, err)
			}
			type key struct{ gen, id uint32 }
			seen := map[key][]uint64{}
			gens := map[uint32]bool{}
			withStack := 0
			err = tracetest.ReadAll(t, r, func(ev *Event) {
				if ev.StackID == 0 || len(ev.Stack) == 0 {
					return
				}
				if ev.StackGen == 0 {
					t.Fatalf("%s: an event with a stack has StackGen 0", name)
				}
				withStack++
				gens[ev.StackGen] = true
				k := key{ev.StackGen, ev.StackID}
				if st, ok := seen[k]; ok && !slices.Equal(st, ev.Stack) {
					t.Fatalf("%s (cache %d): stack %d of generation %d names two stacks", name, cache, ev.StackID, ev.StackGen)
				} else if !ok {
					seen[k] = slices.Clone(ev.Stack)
				}
			})
			if err != nil && !errors.Is(err, ErrTruncated) {
				t.Fatal(name, err)
			}
			if name == "generated" {
				st := r.Stats()
				if withStack == 0 || len(gens) < 2 || cache > 0 && st.StacksEvicted == 0 {
					t.Fatalf("generated (cache %d): %d events with stacks, %d generations, %d evicted: the test saw too little",
						cache, withStack, len(gens), st.StacksEvicted)
				}
			}
		}
	}
}
