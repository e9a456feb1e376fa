// Package unwind walks x86-64 user stacks from a sample's registers and a
// copy of the stack taken with it (perf_event's PERF_SAMPLE_REGS_USER and
// PERF_SAMPLE_STACK_USER): DWARF call-frame information from an ELF file's
// .eh_frame (indexed through .eh_frame_hdr when present) for code that has
// it, frame pointers (RBP chains) for code that has none, such as the .NET
// JIT's output, and where the JIT left a frame without a frame record (its
// RSP-based frames), the first word above SP that points into code.
//
// It owns the CFI parser and the unwinder, nothing else: which file covers
// an address, and where that file is loaded, is the caller's (a Finder).
// A Table is parsed once per file; Unwind then runs without allocating, so
// it can run once per sample.
package unwind
