package clrevents

import "sync/atomic"

// gcStartDecodes counts DecodeGCStart calls: the tests that hold each
// GCStart to one decode per stream on a path (issue 35) read it.
var gcStartDecodes atomic.Uint64

// GCStartDecodes is how many GCStart payloads were decoded so far, by
// anyone in the process (a GCStart is rare: one atomic add per GC).
func GCStartDecodes() uint64 { return gcStartDecodes.Load() }
