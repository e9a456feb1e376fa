// Command clrspy shows what the .NET runtime does to an application: GC
// pauses and runtime suspensions, objects across compacting GCs, stack
// samples and lock contention, live over the diagnostics IPC or from
// .nettrace files. This package is wiring only: cobra commands and flags
// over the library packages.
//
// Flags follow the rules of docs/FLAGS.md, checked over every command by
// TestFlagRules; newRootCmd applies the run-time ones to every command
// (flags.go: durations in plain seconds, one-line flag errors, output
// paths checked before anything starts).
package main
