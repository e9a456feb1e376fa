package clrevents

import (
	"fmt"

	"github.com/clrspy/clrspy/nettrace"
)

// maxDescribe bounds one description: range and type lists can hold
// thousands of entries.
const maxDescribe = 240

// Describe renders a runtime event's decoded payload as text for
// nettrace.Dumper (fmt's %+v of the typed value, cut at 240 bytes); ok is
// false for events without a typed decoder or whose payload does not
// decode.
func Describe(ev *nettrace.Event, pointerSize int) (string, bool) {
	if !HasDecoder(ev.Meta) {
		return "", false
	}
	v, err := Decode(ev, pointerSize)
	if err != nil {
		return "", false
	}
	s := fmt.Sprintf("%+v", v)
	if len(s) > maxDescribe {
		s = s[:maxDescribe] + "..."
	}
	return s, true
}
