// Package tui is clrspy top's view: the view model and its rendering,
// separate from the bubbletea program that runs it (package top), so
// that a frame is a function of monitor snapshots, keys and the
// terminal's size, and tests render it deterministically (golden screens).
//
// What it owns: Model (the latest monitor.Snapshot, the timeline of the
// refreshes so far, and what the keys change: panel, GC table sort and
// filter, frozen display, help), Screen (a frame's content as data, which
// clrspy top --snapshot-every writes as JSON lines) and the layout: a
// title bar and the GC figures (heap per generation after the last GC,
// GCs per generation, % paused over 1/10/60 s and since the start, the
// longest pause), the main panel (the GC table colored by clrspy gc's
// --info/--warn thresholds with slow suspensions marked and non-GC
// suspensions as rows; top contended locks; top methods by samples), a
// pause histogram per generation in clrspy gc's log buckets, a timeline
// sparkline of the share paused per refresh, the runtime's counters as a
// side panel (or flowing lines on a narrow terminal) and the keys' help.
//
// Layout rule: no line is wider than the terminal and there are no more
// lines than its height; columns are dropped in a fixed order, and
// header figures flow as whole items, rather than anything wrapping. The
// frame reads no clock: times come from the snapshot, whose clock is the
// event stream's.
package tui
