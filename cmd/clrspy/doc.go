// Command clrspy shows what the .NET runtime does to an application: GC
// pauses and runtime suspensions, objects across compacting GCs, stack
// samples and lock contention, live over the diagnostics IPC or from
// .nettrace files. This package is wiring only: cobra commands and flags
// over the library packages.
package main
