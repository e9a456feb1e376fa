package serve

import (
	"reflect"
	"testing"

	"github.com/clrspy/clrspy/capture"
	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/ipc"
	"github.com/clrspy/clrspy/locks"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/stacks"
)

// TestMutexProvidersEnableLocksEvents: the /debug/pprof/mutex session
// enables every runtime event that the locks analysis reads to pair waits
// and name their owners (locks.WantsContention: the contention events and
// the thread events mapping a lock's owner to its OS thread) and every
// event that names frames (stacks.SymbolsWant), at their levels, as
// `clrspy locks` does. The hand-written set (Contention and the symbol
// keywords) left out ThreadCreated's keywords: fewer owners named.
func TestMutexProvidersEnableLocksEvents(t *testing.T) {
	// The contention profile's session: the lock job's Set (profile).
	contentionProviders := capture.NewLocks(false).Set().Providers()
	if want := clrevents.ProvidersFor(locks.WantsContention, stacks.SymbolsWant); !reflect.DeepEqual(contentionProviders, want) {
		t.Errorf("providers %+v, want %+v (the hand-derived set)", contentionProviders, want)
	}
	if cpu := profileSetProviders(); !reflect.DeepEqual(cpu, stacks.SamplerProviders()) {
		t.Errorf("CPU profile providers %+v, want the sampler's %+v", cpu, stacks.SamplerProviders())
	}
	if len(contentionProviders) != 1 || contentionProviders[0].Name != nettrace.ProviderRuntime {
		t.Fatalf("providers %+v, want the runtime provider alone", contentionProviders)
	}
	p := contentionProviders[0]
	checked := 0
	clrevents.Specs(func(s *clrevents.Spec) {
		if s.Provider != nettrace.Runtime || s.Keywords() == 0 {
			return
		}
		m := nettrace.Metadata{Runtime: s.Provider, Provider: nettrace.ProviderRuntime, EventID: s.ID, Name: s.Name, Keywords: s.Keywords(), Level: s.Level()}
		if !locks.WantsContention(&m) && !stacks.SymbolsWant(&m) {
			return
		}
		checked++
		if s.Keywords()&p.Keywords == 0 || s.Level() > p.Level {
			t.Errorf("%s (keywords %#x, level %d) not enabled by keywords %#x level %d", s.Name, s.Keywords(), s.Level(), p.Keywords, p.Level)
		}
	})
	if checked < 8 {
		t.Errorf("%d events checked: the spec table's rows were not found", checked)
	}
}

// profileSetProviders is the CPU profile's session's providers (the
// runtime's sampler).
func profileSetProviders() []ipc.Provider {
	return capture.NewCPUProfile(&stacks.Options{}).Set().Providers()
}
