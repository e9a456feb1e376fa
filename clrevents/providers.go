package clrevents

import (
	"github.com/clrspy/clrspy/ipc"
	"github.com/clrspy/clrspy/nettrace"
)

// ProvidersFor is the runtime provider entry a session needs so that the
// runtime writes every event of the table that one of wants accepts (an
// analysis's Wants: gcpause.Wants, locks.Wants, stacks.SymbolsWant ...):
// keywords that enable each of them and the highest of their levels.
// Nil when no runtime event is wanted.
//
// Only the runtime provider is derived. The rundown provider's events come
// from the session's stop-time rundown (ipc.SessionConfig's rundown
// keyword, RundownFor says which keywords they need); the sample profiler
// and EventSource providers (counters) have no rows with keywords here and
// stay with the commands that ask for them.
func ProvidersFor(wants ...func(*nettrace.Metadata) bool) []ipc.Provider {
	kw, level, ok := keywordsFor(nettrace.Runtime, wants)
	if !ok {
		return nil
	}
	return []ipc.Provider{{Name: nettrace.ProviderRuntime, Keywords: kw, Level: level}}
}

// RundownFor is what the rundown provider must enable for the rundown
// events wants accept (ok false: none is wanted).
func RundownFor(wants ...func(*nettrace.Metadata) bool) (keywords uint64, level uint8, ok bool) {
	return keywordsFor(nettrace.Rundown, wants)
}

// keywordsFor covers the wanted events of provider p: an event is enabled
// when the session's keywords share one bit with its mask, so the bits of
// single-keyword events are needed and taken first; an event with several
// keywords that none of them covers adds its whole mask (the runtime's
// code checks particular keywords of such events too, e.g. JIT and NGen
// for method loads, so no bit of it is dropped by guessing). The result
// is the same whatever the order of the table.
func keywordsFor(p nettrace.ProviderKind, wants []func(*nettrace.Metadata) bool) (kw uint64, level uint8, ok bool) {
	var multi []uint64
	for i := range specs {
		s := &specs[i]
		if s.Provider != p || !wanted(s, wants) {
			continue
		}
		ok = true
		level = max(level, s.level)
		switch {
		case s.keywords == 0: // enabled whatever the keywords
		case s.keywords&(s.keywords-1) == 0:
			kw |= s.keywords
		default:
			multi = append(multi, s.keywords)
		}
	}
	// Masks not covered by the single bits, smallest first so that one
	// that includes another's bits is not needed twice.
	for {
		var next uint64
		for _, m := range multi {
			if m&kw == 0 && (next == 0 || m < next) {
				next = m
			}
		}
		if next == 0 {
			break
		}
		kw |= next
	}
	return kw, level, ok
}

func wanted(s *Spec, wants []func(*nettrace.Metadata) bool) bool {
	m := nettrace.Metadata{Provider: s.Provider.Name(), Runtime: s.Provider, EventID: s.ID, Name: s.Name, Keywords: s.keywords, Level: s.level, Version: s.dec.version}
	for _, w := range wants {
		if w(&m) {
			return true
		}
	}
	return false
}
