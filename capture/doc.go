// Package capture holds the one-shot jobs that both `clrspy` commands and
// serve's endpoints run on a target: a heap snapshot (the pause analysis
// and the graph's builder, the graph's memory policy, the graph built
// once the stream has ended); the profiles: which CPU sampler a live
// target gets, perf_event's sampler beside an open stream (`profile`,
// `report`, `triage`), the runtime sampler's CPU profile and the lock
// analysis, their threads named from /proc (`profile`, `locks`, serve's
// /debug/pprof/profile and /contention); the triage window (`triage`,
// serve's /triage): triage's Set, and what /proc says beside the events
// while the window lasts (the threads' CPU demand, the busiest thread,
// the memory split); a live session's copy to a file (`record`, `run
// -o`, `top --record`, `snapshot --save`) and `record`'s read loop
// (Record), the permission of every file about a target; `memory`'s job
// (RunMemory: the runtime's session beside the /proc sampler, the native
// allocation probes), reading a .gcdump or a trace's heap dump
// (ReadSnapshotFile), the live window triage and the report page read
// beside the events (LiveWindow), `stat --events`' dump (EventDump) and a
// program started to be looked at by pid (Program). A job takes a stream
// its caller opened (flags and
// openTarget for the command, the monitored target for serve) and hands
// back a result; the session's opening, the output and the logging stay
// the caller's: no job opens an EventPipe session of its own.
package capture
