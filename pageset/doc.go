// Package pageset composes the analyses the report page is built from in
// one analysis.Set (Register, or New for a Set of its own): the process
// information, one symbol table, GC pauses, samples and their timeline,
// locks, exceptions, the thread pool, requests, sampled heap objects and
// a heap snapshot. Analyses.Parts hands their results to package report as
// report.PageParts. clrspy report and the live page (internal/web) feed
// the same Set, so they derive the same providers; report itself runs no
// analysis.
package pageset
