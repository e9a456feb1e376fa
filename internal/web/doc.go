// Package web is clrspy's live web view: an http.Handler that serves the
// report page (package report's page, in its live form) at its root and
// streams each target's updates to it over a websocket, so the page grows
// as events arrive: new GC rows, the exact rollup, runtime suspensions,
// the lock table, the thread pool and exceptions sections (each built
// from the monitor's analyses by the file page's own functions, sent when
// they change) and a flame graph of the last seconds.
//
// The handler reads from a Monitors: the targets to choose from and, per
// target, a subscription of Updates. Monitors follows every session of a
// fleet (package fleet) as a Watcher, each followed by a monitor.Monitor,
// and keeps each session's page in the session (`clrspy serve --web`
// mounts the handler over serve's fleet, fed by its own monitors, so no
// second session); StreamHub is a Monitors of one source.Stream run in
// process, the one target of a static fleet (`clrspy report --live`, the
// tests). Monitors.SetCPU takes a session's flame graph from a profile
// made beside its monitor (serve's --cpu-profile: the perf sampler, one
// window at a time). PageProviders are the providers a live session
// enables for every section of the page; StreamHub.Serve serves a hub's
// page on a listener (`clrspy report --live`).
//
// Routes, relative to where the handler is mounted (the page uses relative
// URLs, so any prefix works when the page is reached with a trailing
// slash): "" and "index.html" the page, "targets.json" the target list,
// "ws?target=ID" the websocket. The websocket accepts same-origin pages
// only, at most Options.MaxClients at once (503 past it), without
// permessage-deflate (a compressor per socket costs about a megabyte).
package web
