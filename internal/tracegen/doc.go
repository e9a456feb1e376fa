// Package tracegen writes nettrace streams for tests from a short, readable
// description, the way golang.org/x/exp/trace's testgen generators write Go
// execution traces: a Trace holds a clock and threads; each thread's
// methods append one runtime event, named as the runtime names it, with the
// payload laid out as the runtime writes it (the layouts the clrevents
// decoders read) and metadata taken from clrevents' spec table (provider,
// id, the version the decoder reads, keywords and level).
//
//	g := tracegen.New()
//	gc := g.Thread(100)
//	gc.At(10 * time.Millisecond).SuspendEE(clrevents.SuspendForGC, 1)
//	gc.After(500 * time.Microsecond).SuspendEEEnd()
//	gc.GCStart(1, 0, clrevents.ReasonAllocSmall, clrevents.GCNonConcurrent)
//	...
//	g.Run(t, analyzer.Event) // written, read back by nettrace.Reader
//
// Run sends the events through the real writer and reader, so an analysis
// sees what it would see from a file: in timestamp order, events of
// different threads at the same timestamp in the reader's order (give them
// distinct times when the order matters), a lost count only after a
// thread's first event (a reader cannot see a gap before it). Events gives
// them as built, for the few tests that need what no stream carries.
//
// Large streams a big synthetic but realistic trace (the hidden `clrspy
// gentrace` command and the scale benchmarks use it).
//
// The package is for tests and developer tools only: nothing in the
// analyses or the readers depends on it.
package tracegen
