// Package requests owns the per-request analysis: it pairs the incoming
// requests an ASP.NET Core server reports (Kestrel's RequestStart and
// RequestStop, paired by request id; Hosting's, paired by activity id,
// where no Kestrel events come) and gives each request a breakdown of its
// wall time: the GC pause time that overlapped it (the exact overlap of
// its interval with every stop-the-world pause, from analysis.Stopped),
// other runtime suspensions, lock waits and blocked time of the threads
// that ran it (analysis.Wait), outgoing HttpClient calls (System.Net.Http,
// paired through activity ids) and exceptions thrown while it ran. Per
// route (the path with ids and numbers folded) it keeps counts and
// latency percentiles, for all requests and for those a pause did and did
// not hit; per GC, the requests it froze and the request time it cost.
//
// Attribution to threads: with the task library's activity flow on
// (TplEventSource keyword 0x80) events on any thread that carry a
// request's activity id, or a child's, run that request; without it, a
// thread runs the request that last started on it until that request
// stops (Result.ActivityFlow says which).
//
// Memory is bounded at any request rate: per-route logarithmic sketches
// (1 % relative error), a bounded slowest-N set, a bounded table of open
// requests and of routes; lost and unpaired events are counted.
//
// The Analyzer does no I/O (a state machine fed from a file or a live
// session). Feed Stopped and Wait from the analyses that own them
// (gcpause.Options.OnStopped, locks.Options.OnWait) before the event that
// follows them.
package requests
