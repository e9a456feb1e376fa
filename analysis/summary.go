package analysis

import "github.com/clrspy/clrspy/nettrace"

// Summary counts a stream's events per provider, event id and version
// (the reader's nettrace.Summary, `clrspy stat`'s table) as an analysis.
type Summary struct{ *nettrace.Summary }

// NewSummary returns an empty Summary.
func NewSummary() Summary { return Summary{nettrace.NewSummary()} }

// Event implements Analyzer.
func (c Summary) Event(ev *nettrace.Event) { c.Add(ev) }

// Stats implements Analyzer: the summary decodes nothing.
func (c Summary) Stats() Stats { return Stats{} }
