// Package report renders analysis results for people and programs: text
// tables, JSON documents, CSV, pprof, speedscope, folded stacks and HTML.
// It owns presentation only; numbers come from the analysis packages.
package report
