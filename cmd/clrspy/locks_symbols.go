package main

import (
	"github.com/clrspy/clrspy/locks"
	"github.com/clrspy/clrspy/nettrace"
)

// lockSymbolizer is fed every event (method and module maps arrive during
// the session and in the rundown at its end) and names the waiting stacks
// once the stream is over.
type lockSymbolizer interface {
	Event(ev *nettrace.Event)
	locks.Symbolizer
}

// newLockSymbolizer returns the profiler's symbolizer (package stacks)
// behind the locks.Symbolizer interface.
func newLockSymbolizer(hdr *nettrace.Header) lockSymbolizer {
	return locks.NewStackSymbolizer(hdr)
}
