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
// flagged (e.g. HasAddress). Event ids are the constants below; consumers
// switch on (Metadata.Runtime, Metadata.EventID) and call the decoder.
package clrevents
