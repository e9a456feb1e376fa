// Package fleet is the registry of the .NET processes clrspy monitors
// (`clrspy serve`): discovery, attach, retry, and one Source per target,
// the one type serve, metrics and the live web view read.
//
// Discovery (attach mode) lists /proc once a second and watches the
// diagnostics socket directories with inotify, so a new process is seen
// within a second or two, in other pid and mount namespaces too when run
// as root; only processes never seen before are probed, and the socket
// directory is listed once, then kept up to date from inotify, so an idle
// host costs next to nothing. Listen mode (Config.DiagnosticPort) accepts
// runtimes on a reverse diagnostic port, opens each one's session while it
// waits suspended, then resumes it. Every target gets a session goroutine
// that opens the session, feeds a monitor.Monitor, and on a failure
// retries with backoff while the process lives; a session that fails
// never affects the others. A target whose process exited is kept
// (listed, its last session's figures exported) for Config.Grace, then
// dropped; a restarted process is a new target. Stop (the context given
// to Run) stops every session cleanly: the runtime writes its rundown and
// the target runs on.
//
// Totals run from the process start, as the OpenTelemetry conventions
// define them: a session on a process that ran 10 s before the attach
// (meterMinAge) also asks for the runtime's System.Runtime meter (.NET
// 9+), whose first publication tells what the runtime counted before the
// attach (monitor.BeforeSession); younger processes, whose exit soon after
// a meter session may hang on .NET 10, get the EventCounters only at
// first, and a second, short meter session once they are 30 s old
// (seedLater), whose totals the monitor aligns by the GC events' own
// numbering (monitor.SeedFrom).
//
// Memory: every Config.MemoryInterval each visible target's RSS is split
// by package memory from its /proc/PID/smaps (and its memory cgroup read),
// the last splits kept (Source.Memory).
//
// The surfaces follow the sessions through Watchers (Fleet.Watch): each
// adds its hooks to a session's monitor options (Prepare), may run beside
// it (Run), and is told when its stream ended and when it is gone; they
// keep their state in the Session or the Source (Value), not in maps of
// their own. Source.Open opens a second, short session on a target (a
// job's: a profile, a heap snapshot), through its reverse connection in
// listen mode; Session.Attach hands the monitoring session's events to an
// analysis for a while (serve's /triage window). Static is a fleet with
// no discovery whose one target is a stream its caller reads
// (Source.Follow: `clrspy report --live`).
package fleet
