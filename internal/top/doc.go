// Package top runs clrspy top: the bubbletea program that shows package
// tui's view of a live monitor (package monitor) in a terminal.
//
// What it owns: the session's lifecycle around the screen (the stream is
// read into the monitor on its own goroutine; the screen takes a snapshot
// every refresh, one second by default, and the terminal gets only the
// lines that changed, so nothing flickers; q or a signal stops the
// session cleanly, the runtime's rundown included, and leaves the target
// running; when the target exits the last frame stays, with its status,
// until q), the --snapshot-every JSON lines (tui.Screen, appended to a
// writer) and notices that arrive while the screen is up (Notes, shown
// under the header instead of corrupting the screen on stderr), the files
// beside the screen (Files: a launched program's standard streams, the
// snapshots file, never through a link) and what /proc and the target's
// memory add to the monitor (Watch, Rundown, MemoryOf).
//
// What it does not own: opening the target (package source, from the
// command's flags), the frame's content and layout (package tui), the
// model (package monitor).
package top
