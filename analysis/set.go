package analysis

import (
	"fmt"
	"reflect"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/ipc"
	"github.com/clrspy/clrspy/nettrace"
)

// Spec says what an analysis of a Set reads, so that the Set derives the
// session's providers and the reader's Keep from its analyses instead of
// each command writing them again.
type Spec struct {
	// Name names the analysis (Set.Names, errors).
	Name string
	// Keep reports whether the analysis reads events of m (its package's
	// Wants). Nil: every event (the reader then skips none).
	Keep func(*nettrace.Metadata) bool
	// Enable are the events a session must enable for it, when they are
	// not Keep's (heap reads every runtime event but needs only some
	// enabled). Nil: Keep's (nothing when Keep is nil too).
	Enable []func(*nettrace.Metadata) bool
	// Providers are what the table of runtime events cannot derive: the
	// sample profiler, EventSources (counters).
	Providers []ipc.Provider
	// Uncounted leaves the analysis's Stats out of the Set's: it decodes
	// events another analysis of the Set already counts.
	Uncounted bool
	// External marks an analysis its caller feeds (a table shared with
	// analyses outside the Set): the Set shares it, neither feeds nor
	// counts nor finishes it.
	External bool
}

// Set composes the analyses a command, a live view or a daemon runs on one
// stream, in two phases: registration (Add, Shared), which is enough to
// say the session's Providers and the reader's Keep before a stream
// exists, then Start with the stream's header, which creates the analyses
// in registration order. Events reach them in that order; an analysis
// that shares another's value (Shared: the one symbol table) is
// registered after it, so the shared one has always seen the event first.
//
// The Set also carries the facts one analysis owns to the others
// (observe.go): an analysis implementing Publisher is handed the Set's
// Bus, and every analysis implementing StoppedObserver or WaitObserver
// receives what is published on it. A Set is an Analyzer and a Finisher,
// so a source runs it as one.
type Set struct {
	parts   []part
	shared  map[reflect.Type]any
	hdr     *nettrace.Header
	started bool
	as      []Analyzer
	counted []Analyzer
	fin     []Finisher
	bus     Bus
}

type part struct {
	spec  Spec
	start func(*nettrace.Header) Analyzer
}

// Ref is an analysis of a Set: its value exists once the Set started.
type Ref[T Analyzer] struct {
	v   T
	set *Set
}

// Get is the analysis (it panics before the Set started: a wiring error).
func (r *Ref[T]) Get() T {
	if !r.set.started {
		panic("analysis: Ref.Get before Set.Start")
	}
	return r.v
}

// NewSet returns an empty Set.
func NewSet() *Set { return &Set{shared: map[reflect.Type]any{}} }

// Add registers an analysis: newT creates it at Start.
func Add[T Analyzer](s *Set, spec Spec, newT func(*nettrace.Header) T) *Ref[T] {
	if s.started {
		panic(fmt.Sprintf("analysis: %s added after Set.Start", spec.Name))
	}
	r := &Ref[T]{set: s}
	s.parts = append(s.parts, part{spec: spec, start: func(h *nettrace.Header) Analyzer {
		r.v = newT(h)
		return r.v
	}})
	return r
}

// Shared registers the Set's one analysis of type T, or returns the one
// already registered (the symbol table every stack-naming analysis of a
// stream shares): the first registration's spec and constructor win.
func Shared[T Analyzer](s *Set, spec Spec, newT func(*nettrace.Header) T) *Ref[T] {
	k := reflect.TypeFor[T]()
	if r, ok := s.shared[k]; ok {
		return r.(*Ref[T])
	}
	r := Add(s, spec, newT)
	s.shared[k] = r
	return r
}

// Slot is the Set's one value of type T (zero at first use), for what the
// registrations of a shared analysis gather before it is created (the
// pause analysis' callbacks: gcpause.In).
func Slot[T any](s *Set) *T {
	k := reflect.TypeFor[*T]()
	if v, ok := s.shared[k]; ok {
		return v.(*T)
	}
	v := new(T)
	s.shared[k] = v
	return v
}

// Names lists the registered analyses in the order they are fed.
func (s *Set) Names() []string {
	out := make([]string, len(s.parts))
	for i, p := range s.parts {
		out[i] = p.spec.Name
	}
	return out
}

// Providers is what a session must enable for every analysis of the Set:
// the runtime provider's keywords and level derived from the events they
// read (clrevents.ProvidersFor), merged with their own providers
// (ipc.Merge: keywords joined, the highest level).
func (s *Set) Providers() []ipc.Provider {
	var wants []func(*nettrace.Metadata) bool
	lists := [][]ipc.Provider{nil}
	for _, p := range s.parts {
		switch {
		case p.spec.Enable != nil:
			wants = append(wants, p.spec.Enable...)
		case p.spec.Keep != nil:
			wants = append(wants, p.spec.Keep)
		}
		lists = append(lists, p.spec.Providers)
	}
	lists[0] = clrevents.ProvidersFor(wants...)
	return ipc.Merge(lists...)
}

// Keep is the reader's filter (source.Spec.Keep): an event any analysis
// reads. Nil when one of them reads every event.
func (s *Set) Keep() func(*nettrace.Metadata) bool {
	keeps := make([]func(*nettrace.Metadata) bool, 0, len(s.parts))
	for _, p := range s.parts {
		if p.spec.Keep == nil {
			return nil
		}
		keeps = append(keeps, p.spec.Keep)
	}
	return func(m *nettrace.Metadata) bool {
		for _, k := range keeps {
			if k(m) {
				return true
			}
		}
		return false
	}
}

// Start creates the analyses for a stream with header hdr, in
// registration order, and connects publishers to observers.
func (s *Set) Start(hdr *nettrace.Header) {
	if s.started {
		panic("analysis: Set started twice")
	}
	s.hdr, s.started = hdr, true
	for _, p := range s.parts {
		a := p.start(hdr)
		if p.spec.External {
			continue
		}
		s.as = append(s.as, a)
		if !p.spec.Uncounted {
			s.counted = append(s.counted, a)
		}
		if f, ok := a.(Finisher); ok {
			s.fin = append(s.fin, f)
		}
		if o, ok := a.(StoppedObserver); ok {
			s.bus.stopped = append(s.bus.stopped, o)
		}
		if o, ok := a.(WaitObserver); ok {
			s.bus.waits = append(s.bus.waits, o)
		}
	}
	for _, a := range s.as {
		if p, ok := a.(Publisher); ok {
			p.Publish(&s.bus)
		}
	}
}

// Header is the header the Set started with (nil before Start).
func (s *Set) Header() *nettrace.Header { return s.hdr }

// Analyzers are the Set's analyses in the order they are fed (after
// Start).
func (s *Set) Analyzers() []Analyzer { return s.as }

// Event implements Analyzer: ev goes to every analysis in order.
func (s *Set) Event(ev *nettrace.Event) {
	for _, a := range s.as {
		a.Event(ev)
	}
}

// Stats implements Analyzer: the counted analyses' stats summed.
func (s *Set) Stats() Stats {
	var st Stats
	for _, a := range s.counted {
		st.Add(a.Stats())
	}
	return st
}

// Finish implements Finisher: the analyses with work at the stream's end
// do it, in order.
func (s *Set) Finish() {
	for _, f := range s.fin {
		f.Finish()
	}
}

// Bus hands the facts an analysis publishes to the analyses of its Set
// that observe them. A nil Bus drops them (an analysis run alone).
type Bus struct {
	stopped []StoppedObserver
	waits   []WaitObserver
}

// Publisher is an analysis that owns facts others observe (gcpause the
// suspensions, locks the waits): Start hands it the Set's Bus.
type Publisher interface {
	Publish(*Bus)
}

// Stopped hands s to every StoppedObserver.
func (b *Bus) Stopped(s *Stopped) {
	if b == nil {
		return
	}
	for _, o := range b.stopped {
		o.Stopped(s)
	}
}

// Wait hands w to every WaitObserver.
func (b *Bus) Wait(w *Wait) {
	if b == nil {
		return
	}
	for _, o := range b.waits {
		o.Wait(w)
	}
}

// Observes reports whether anything on the bus wants suspensions (a
// publisher skips building them otherwise).
func (b *Bus) Observes() bool { return b != nil && len(b.stopped) > 0 }
