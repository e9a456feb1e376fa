package monitor_test

import (
	"encoding/binary"
	"testing"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/internal/monitor"
	"github.com/clrspy/clrspy/nettrace"
)

func runtimeMeta(id, version uint32) *nettrace.Metadata {
	return &nettrace.Metadata{Provider: nettrace.ProviderRuntime, Runtime: nettrace.Runtime, EventID: id, Version: version}
}

var (
	gcStartMeta   = runtimeMeta(clrevents.IDGCStart, 2)
	gcEndMeta     = runtimeMeta(clrevents.IDGCEnd, 1)
	heapStatsMeta = runtimeMeta(clrevents.IDGCHeapStats, 2)
	restartBMeta  = runtimeMeta(clrevents.IDGCRestartEEBegin, 1)
)

func u32s(v ...uint32) []byte {
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, x)
	}
	return append(b, 0, 0) // ClrInstanceID
}

// gc feeds the events of one blocking gen0 GC from its start (at, in s)
// to its restart; suspended: its SuspendEEBegin is part of the stream.
func (s *synth) gc(at, pause float64, n uint32, suspended bool) {
	const tid = 7
	if suspended {
		s.suspend(at, tid, clrevents.SuspendForGC)
	}
	s.feed(gcStartMeta, at+pause/10, tid, append(u32s(n, 0, uint32(clrevents.ReasonAllocSmall), uint32(clrevents.GCNonConcurrent)), make([]byte, 8)...))
	s.feed(gcEndMeta, at+pause/2, tid, u32s(n, 0))
	s.feed(heapStatsMeta, at+pause/2, tid, make([]byte, 110))
	s.feed(restartBMeta, at+pause, tid, []byte{0, 0})
	s.restart(at+pause, tid)
}

// TestLongestLeavesOutUnseenStarts: a session that begins inside a GC's
// stop sees a lower bound of its pause; like clrspy gc (gcpause's
// rollup), the monitor keeps it out of the longest pause, which live
// views compare with clrspy gc's.
func TestLongestLeavesOutUnseenStarts(t *testing.T) {
	s := newSynth(monitor.Options{})
	s.gc(0, 0.050, 5, false) // 50 ms seen, its start before the session
	s.gc(1, 0.003, 6, true)
	s.gc(2, 0.004, 7, true)
	snap := s.m.Snapshot()
	if err := snap.CheckValid(); err != nil {
		t.Error(err)
	}
	if snap.GC.GCCount != 3 || snap.GC.Longest == nil || snap.GC.Longest.Number != 7 {
		t.Fatalf("%d GCs, longest %+v", snap.GC.GCCount, snap.GC.Longest)
	}
	if d := snap.GC.Longest.PauseMS - 4; d > 1e-6 || d < -1e-6 {
		t.Errorf("longest %.6f ms, want 4", snap.GC.Longest.PauseMS)
	}
}
