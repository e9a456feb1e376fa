// Package nettrace reads and writes EventPipe trace streams: NetPerf V3
// (.NET Core 2.1), NetTrace V4/V5 (every runtime since .NET Core 3.0, the
// only thing the diagnostics IPC sends) and NetTrace V6 (the block format).
//
// It owns the byte format only: the stream header, blocks, metadata records,
// stack and sequence-point bookkeeping, ordering of events by timestamp,
// lost-event detection and truncation. It knows runtime events by name (the
// runtime writes empty names) but not their payload layouts: those belong to
// package clrevents. Self-describing (EventSource, TraceLogging) payloads are
// decoded here, from their metadata.
//
// The Reader is a streaming pull parser: memory is bounded by the runtime's
// buffering (events between two sequence points) and by Options (block size,
// stack cache), not by the stream length, and the hot path does not allocate
// per event. With Options.Threads > 1 (files) it decodes event blocks on
// several goroutines and delivers exactly what a one-goroutine read would.
package nettrace
