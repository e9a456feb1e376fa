package main

import (
	"github.com/clrspy/clrspy/report"
	"github.com/clrspy/clrspy/stacks"
)

// eventedSpeedscope spills the samples of a speedscope profile while the
// stream runs (speedscope's time-order view needs every sample in order);
// nil for the other formats. Close it when done.
func eventedSpeedscope(format string, o *stacks.Options) (*speedscopeSpill, error) {
	if format != "speedscope" {
		return nil, nil
	}
	e, err := report.NewEventedSpeedscope("")
	if err != nil {
		return nil, err
	}
	o.OnSample = e.Sample
	return &speedscopeSpill{e}, nil
}

// speedscopeSpill is an EventedSpeedscope whose Close is nil-safe.
type speedscopeSpill struct{ *report.EventedSpeedscope }

func (s *speedscopeSpill) Close() error {
	if s == nil {
		return nil
	}
	return s.EventedSpeedscope.Close()
}
