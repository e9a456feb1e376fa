package clrevents

import (
	"errors"

	"github.com/clrspy/clrspy/nettrace"
)

// GCNoUserData is the payload of events that carry only the runtime
// instance (GCSuspendEEEnd, GCRestartEEBegin/End, GCFinalizersBegin,
// GCCreate/TerminateConcurrentThread).
type GCNoUserData struct {
	ClrInstanceID uint16
}

// DecodeGCNoUserData decodes a ClrInstanceID-only payload (v1; v0 is empty).
func DecodeGCNoUserData(p []byte, version uint32, _ int) (GCNoUserData, error) {
	r := nettrace.NewCursor(p)
	var v GCNoUserData
	if version >= 1 {
		v.ClrInstanceID = r.U16()
	}
	if !r.OK() {
		return v, short("GCNoUserData", version, len(p))
	}
	return v, nil
}

// ErrNoDecoder is returned by Decode for events this package has no typed
// decoder for.
var ErrNoDecoder = errors.New("no typed decoder for this event")

type decodeFunc func(p []byte, version uint32, ptrSize int) (any, error)

func wrap[T any](f func([]byte, uint32, int) (T, error)) decodeFunc {
	return func(p []byte, v uint32, ptr int) (any, error) { return f(p, v, ptr) }
}

// HasDecoder reports whether Decode knows the event type of m.
func HasDecoder(m *nettrace.Metadata) bool {
	s := specOf(m)
	return s != nil && s.dec.f != nil
}

// specOf is the spec of m's event: by provider kind for the runtime's
// providers, by provider name for the others with rows of their own.
func specOf(m *nettrace.Metadata) *Spec {
	if m.Runtime != nettrace.NotRuntime {
		return Lookup(m.Runtime, m.EventID)
	}
	return LookupProvider(m.Provider, m.EventID)
}

// Decode decodes any event this package knows into its typed value
// (GCStart, Method, ContentionStart, ...; another provider's by its
// name), for tools that handle events generically (dumps, tests).
// Analyses call the specific decoders.
func Decode(ev *nettrace.Event, ptrSize int) (any, error) {
	s := specOf(ev.Meta)
	if s == nil || s.dec.f == nil {
		return nil, ErrNoDecoder
	}
	return s.dec.f(ev.Payload, ev.Meta.Version, ptrSize)
}
