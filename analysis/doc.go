// Package analysis defines what every clrspy analysis is to its sources:
// a state machine fed one event at a time, in stream order, that reports
// what it consumed. A source (package source) can feed any set of analyses
// from one stream, so `clrspy report` and `clrspy serve` run gcpause,
// locks, stacks and heap side by side over a single session.
//
// Each analysis package follows the same shape:
//
//	a := gcpause.New(hdr, gcpause.Options{...})
//	for ev := range events { a.Event(ev) }
//	res := a.Result() // a snapshot; may be taken at any time, also mid-stream
//	st := a.Stats()   // events used, payloads that did not decode
//
// Result types differ per analysis, so Result is not part of the interface.
//
// A Set composes the analyses a command needs on one stream: it derives
// the session's providers and the reader's Keep from their Specs, shares
// one symbol table among them (stacks.SymbolsIn), fixes the order they are
// fed in, and hands the facts one analysis owns (Stopped, Wait) to the
// others that observe them, so no analysis imports another
// (docs/ARCHITECTURE.md, "One pipeline").
// Analyses are not safe for concurrent use: a live view takes its Result
// on the goroutine that feeds the events, or guards both with one lock.
package analysis
