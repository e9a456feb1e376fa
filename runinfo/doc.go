// Package runinfo owns what a stream says about the traced process
// itself: its command line, OS and architecture (the EventPipe provider's
// ProcessInfo event), the runtime's version and GC flavor (the runtime's
// RuntimeInformation event, also repeated by the rundown). Reports show it
// next to their numbers so a page says what it was measured on.
//
// It does no I/O: feed it a stream's events like any analysis.
package runinfo
