// Package workload is test support: it builds the C# test workload in
// testdata/workloads/Workload once per test process (several test binaries
// and engineers may build at the same time, so builds are serialised with a
// flock next to the project) and starts its modes as real .NET processes,
// parsing the one JSON line each mode prints on exit.
//
// Build is the one way the test tree builds a .NET program (the workload,
// internal/traceevent's TraceEvent program): dotnet build in Release, skipped
// when the executable is newer than every source, under a flock.
//
// CLRSPY_WORKLOAD_TFM=net8.0 (or net9.0) builds a self-contained workload
// for that runtime instead of the default framework-dependent net10.0 one,
// so the end-to-end tests can run against older runtimes.
package workload
