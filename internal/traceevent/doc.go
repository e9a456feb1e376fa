// Package traceevent is test support: it builds the TraceEvent program in
// testdata/traceevent/TraceEventBench (a console program on the
// Microsoft.Diagnostics.Tracing.TraceEvent package from NuGet, the library
// PerfView is built on) once per test process, through internal/workload's
// Build, and runs its modes on trace files, parsing the JSON they print:
//
//   - Stat: every event read by TraceEvent's EventPipeEventSource, counted
//     per provider, event, id and version (what clrspy stat counts);
//   - GC: TraceEvent's GC analysis (TraceLoadedDotNetRuntime, the rows of
//     PerfView's GCStats view): per GC its number, generation, type, reason,
//     completeness and pause (what clrspy gc reports as pause_ms);
//   - Exceptions: every exception event as TraceEvent's parser decodes it,
//     in stream order (what clrevents' exception decoders read).
//
// The same program is what scripts/compare-traceevent.sh times against
// clrspy.
package traceevent
