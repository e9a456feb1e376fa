// Package exceptions owns the exception analysis: it counts every managed
// exception the runtime reports (ExceptionThrown_V1, first chance,
// rethrows included) by type, by message pattern (numbers, hex values,
// GUIDs and ids folded, so "order 42 not found" and "order 43 not found"
// are one pattern), by throw site (the first application frame of the
// throw's stack, and the stack) and by catch site (the method the runtime
// names in ExceptionCatchStart), and it follows each exception's dispatch
// per thread (ExceptionFilter/Finally/Catch Start and Stop,
// ExceptionThrownStop where the runtime sends it) to tell caught ones
// from those no catch was seen for. The rate over time is a bounded
// timeline.
//
// It is a state machine over *nettrace.Event with no I/O, equally fed from
// a live session or a file. Memory is bounded: distinct types, stacks,
// message patterns and catch sites are capped (Options), and what comes
// past a cap is counted under an "[other ...]" entry, never dropped.
// Stacks are named at Result time through package stacks' symbol table,
// as the other analyses name theirs.
package exceptions
