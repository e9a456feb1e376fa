// Package devprof is clrspy's own measuring, for its developers: its CPU
// and heap profiles ($CLRSPY_CPUPROFILE, $CLRSPY_MEMPROFILE) and its
// phases' times and memory ($CLRSPY_PHASES) on stderr, as
// docs/PERFORMANCE.md's figures were broken down.
package devprof
