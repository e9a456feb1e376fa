package heap

import (
	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/nettrace"
)

// Survival is a Tracker fed only while it can tell survival: without the
// GC's survival and movement events it learns nothing a report shows, and
// following every sampled object across thousands of GCs would cost more
// than every other analysis of a stream together. After giveUp GCs
// without such an event it drops the tracker and ignores the rest.
type Survival struct {
	t      *Tracker
	giveUp int
	gcs    int
	seen   bool
	stats  analysis.Stats // the tracker's, when it was dropped
}

// NewSurvival returns a Survival over a Tracker made with o that gives
// up after giveUp GCs without a survival or movement event.
func NewSurvival(hdr *nettrace.Header, o Options, giveUp int) *Survival {
	return &Survival{t: New(hdr, o), giveUp: giveUp}
}

// Tracker is the tracker, nil once given up.
func (s *Survival) Tracker() *Tracker { return s.t }

// Event implements analysis.Analyzer.
func (s *Survival) Event(ev *nettrace.Event) {
	if s.t == nil {
		return
	}
	if ev.Meta.Runtime == nettrace.Runtime && !s.seen {
		switch ev.Meta.EventID {
		case clrevents.IDGCBulkMovedObjectRanges, clrevents.IDGCBulkSurvivingObjectRanges:
			s.seen = true
		case clrevents.IDGCStart:
			if s.gcs++; s.gcs > s.giveUp {
				s.stats, s.t = s.t.Stats(), nil
				return
			}
		}
	}
	s.t.Event(ev)
}

// Stats implements analysis.Analyzer.
func (s *Survival) Stats() analysis.Stats {
	if s.t == nil {
		return s.stats
	}
	return s.t.Stats()
}

// Finish implements analysis.Finisher.
func (s *Survival) Finish() {
	if s.t != nil {
		s.t.Finish()
	}
}
