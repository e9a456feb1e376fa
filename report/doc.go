// Package report renders analysis results for people and programs: text
// tables, JSON documents, CSV, pprof, speedscope, folded stacks and HTML.
// It owns presentation only; numbers come from the analysis packages.
// Each analysis command's report is one Section (section.go): its text,
// JSON and pprof writers and its page part, registered once here, so the
// command only wires its flags (cmd/clrspy's runSection).
//
// The report page (page*.go, page/) is one self-contained HTML file of
// every analysis at once (clrspy report); internal/web serves the same page
// live. The page is made of PageParts, the analyses' results; package
// pageset composes the analyses they come from, so report consumes no
// event and runs no analysis (analysis.TestReportConsumesNoEvents). The
// page's flame graph panel has views (PageParts.Views, FlameView), each a profile titled by
// what its samples measure: LabelCPU for perf_event's on-CPU samples,
// LabelWall for the runtime's sampler (every managed thread, running or
// waiting); another sampler's profile (off-CPU time) is one more view.
//
// When the input holds a heap dump (or is a .gcdump), the page has a heap
// snapshot section (page_snapshot.go): heapgraph's bounded dominator tree
// as an icicle, the types by retained bytes and each top type's retention
// paths, all precomputed, so the page stays self-contained and a few
// hundred KB whatever the heap's size.
package report
