// Package clrevents decodes the payloads of the runtime's own events
// (Microsoft-Windows-DotNETRuntime, -Rundown, -Private and the sample
// profiler) into typed Go values, keyed by provider, event id and version.
//
// Runtime events carry minimal metadata (no field list), so their layouts
// are known here, per version: versions only append fields, so a decoder
// reads the fields its version defines and tolerates longer payloads.
// Decoders never panic on short or hostile payloads: they return an error
// (ErrShort) instead.
//
// Conventions (every decoder follows them):
//
//	func DecodeX(payload []byte, version uint32, ptrSize int) (X, error)
//
// ptrSize is the trace's pointer size (Header.PointerSize, 4 or 8). Fields a
// version does not carry are left zero and, where a consumer must know,
// flagged (e.g. HasAddress). Consumers switch on (Metadata.Runtime,
// Metadata.EventID) with the ID constants and call the decoder.
//
// What clrspy knows of each event type is one table (spec.go): provider,
// id, TraceEvent's name, the keywords and level that enable it (the
// runtime manifest's, for the runtime and rundown providers), and the
// decoder with the newest payload version it reads (Lookup, Decode; Newer
// finds events written in a later version, which `clrspy stat` reports).
// Another file adds its provider's rows with register (or
// registerProvider, for a provider that is not the runtime's: an
// EventSource's, looked up by name with LookupProvider). The names reach
// package nettrace through a hook this package registers when it is linked
// in, so a trace's events are named in every tool and test that decodes
// them; ProvidersFor derives a session's runtime provider from the events
// analyses want. tracegen's encoders are checked against the decoders by
// a round trip (FuzzEncodeDecode). Payloads are read with nettrace.Cursor, the one
// bounds-checked little-endian reader of the code base.
package clrevents
