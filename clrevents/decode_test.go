package clrevents

import (
	"fmt"
	"sort"
	"testing"

	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/nettrace"
)

// FuzzDecode runs every typed decoder on arbitrary payloads and versions:
// no panic, and a decoded value or an error. Seeds are real payloads, one
// per (event, version) of the fixture traces.
func FuzzDecode(f *testing.F) {
	keys := decoderKeys()
	index := map[*Spec]int{}
	for i, k := range keys {
		index[k] = i
	}
	seen := map[string]bool{}
	for _, name := range tracetest.Fixtures(f) {
		r := tracetest.Open(f, name, nettrace.NewReader)
		readAll(f, r, func(ev *nettrace.Event) {
			i, ok := index[Lookup(ev.Meta.Runtime, ev.Meta.EventID)]
			s := fmt.Sprint(i, ev.Meta.Version)
			if !ok || seen[s] {
				return
			}
			seen[s] = true
			f.Add(uint16(i), ev.Meta.Version, r.Header().PointerSize == 4, append([]byte(nil), ev.Payload...))
		})
	}
	f.Fuzz(func(t *testing.T, i uint16, version uint32, ptr4 bool, payload []byte) {
		k := keys[int(i)%len(keys)]
		ptr := 8
		if ptr4 {
			ptr = 4
		}
		v, err := k.dec.f(payload, version%8, ptr)
		if err == nil && v == nil {
			t.Fatalf("%s: nil value without error", k.Name)
		}
	})
}

// decoderKeys are the events with a typed decoder, by provider then id:
// FuzzDecode's seeds name a decoder by its index here (the runtime's
// providers only: a test's rows of another provider do not move them).
func decoderKeys() []*Spec {
	var keys []*Spec
	Specs(func(s *Spec) {
		if s.Decodes() && s.Provider != nettrace.NotRuntime {
			keys = append(keys, s)
		}
	})
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].Provider != keys[j].Provider {
			return keys[i].Provider < keys[j].Provider
		}
		return keys[i].ID < keys[j].ID
	})
	return keys
}
