// Package flightrec keeps the recent past of a live stream in memory so it
// can be written out after something interesting happened, as
// golang.org/x/exp/trace's FlightRecorder does for Go execution traces.
//
// A Recorder holds a bounded ring of deep-copied events (by age and by
// bytes) plus the events a reader needs to make sense of any window (method
// and module loads, rundown), and writes a window as a readable .nettrace.
// A PauseTrigger drives one from GC pauses: when a pause longer than a
// threshold ends, it waits a little longer, then saves the window around it
// (the "stop the trace after a long GC" of dotnet/diagnostics#464).
//
// The package does no I/O of its own: files are opened by a callback.
package flightrec
