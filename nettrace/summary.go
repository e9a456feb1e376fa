package nettrace

import (
	"sort"
)

// EventCount is the number of events of one (provider, id, version).
type EventCount struct {
	Provider  string `json:"provider"`
	ID        uint32 `json:"id"`
	Version   uint32 `json:"version"`
	Name      string `json:"name"`
	Count     uint64 `json:"count"`
	WithStack uint64 `json:"with_stack"`
	// Kind is the provider's kind (the runtime's own or not), for lookups.
	Kind ProviderKind `json:"-"`
}

// Summary counts events by (provider, id, version). Metadata records of one
// key can repeat (a trace can define the same event twice); they are merged.
type Summary struct {
	byMeta map[*Metadata]*EventCount
	byKey  map[countKey]*EventCount
}

type countKey struct {
	provider    string
	id, version uint32
}

// NewSummary returns an empty Summary.
func NewSummary() *Summary {
	return &Summary{byMeta: make(map[*Metadata]*EventCount), byKey: make(map[countKey]*EventCount)}
}

// Add counts one event.
func (s *Summary) Add(ev *Event) {
	c := s.of(ev.Meta)
	c.Count++
	if len(ev.Stack) > 0 {
		c.WithStack++
	}
}

func (s *Summary) of(m *Metadata) *EventCount {
	c := s.byMeta[m]
	if c == nil {
		k := countKey{m.Provider, m.EventID, m.Version}
		c = s.byKey[k]
		if c == nil {
			c = &EventCount{Provider: k.provider, ID: k.id, Version: k.version, Name: m.Name, Kind: m.Runtime}
			s.byKey[k] = c
		}
		s.byMeta[m] = c
	}
	return c
}

// Summarize adds to s every event r read so far, kept by Options.Keep or
// not: what Add on each event of a read without Keep would have counted.
// The counts follow the events Next took from the decoders, so a reader
// read to its end (io.EOF or a truncation) counts every event of the
// stream, and a command that needs only the counts can reject every
// event (Keep) and leave the merge almost nothing to sort.
func (r *Reader) Summarize(s *Summary) {
	for _, m := range r.counted {
		c := s.of(m)
		c.Count += m.readEvents
		c.WithStack += m.readStack
	}
}

// Counts returns the counts sorted by provider, id and version.
func (s *Summary) Counts() []EventCount {
	out := make([]EventCount, 0, len(s.byKey))
	for _, c := range s.byKey {
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Provider != b.Provider {
			return a.Provider < b.Provider
		}
		if a.ID != b.ID {
			return a.ID < b.ID
		}
		return a.Version < b.Version
	})
	return out
}
