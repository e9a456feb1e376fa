package monitor_test

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/internal/monitor"
	"github.com/clrspy/clrspy/nettrace"
)

// synth feeds hand-made runtime events with timestamps in nanoseconds.
type synth struct {
	m  *monitor.Monitor
	ev nettrace.Event
}

var (
	testHdr     = &nettrace.Header{QPCFrequency: 1_000_000_000, PointerSize: 8}
	suspendMeta = &nettrace.Metadata{Provider: nettrace.ProviderRuntime, Runtime: nettrace.Runtime, EventID: clrevents.IDGCSuspendEEBegin, Version: 1}
	restartMeta = &nettrace.Metadata{Provider: nettrace.ProviderRuntime, Runtime: nettrace.Runtime, EventID: clrevents.IDGCRestartEEEnd, Version: 1}
	clockMeta   = &nettrace.Metadata{Provider: "Clock", EventName: "Tick"}
)

func newSynth(opts monitor.Options) *synth {
	opts.NoCounters = true
	return &synth{m: monitor.New(testHdr, opts)}
}

func (s *synth) feed(m *nettrace.Metadata, ts float64, tid uint64, payload []byte) {
	s.ev = nettrace.Event{Meta: m, Timestamp: int64(math.Round(ts * 1e9)), ThreadID: tid, Payload: payload}
	s.m.Event(&s.ev)
}

func (s *synth) suspend(ts float64, tid uint64, r clrevents.SuspendReason) {
	p := binary.LittleEndian.AppendUint32(nil, uint32(r))
	p = binary.LittleEndian.AppendUint32(p, 1)
	s.feed(suspendMeta, ts, tid, binary.LittleEndian.AppendUint16(p, 0))
}

func (s *synth) restart(ts float64, tid uint64) { s.feed(restartMeta, ts, tid, []byte{0, 0}) }
func (s *synth) tick(ts float64)                { s.feed(clockMeta, ts, 1, nil) }

func checkWindows(t *testing.T, snap *monitor.Snapshot, want map[float64][2]float64) {
	t.Helper()
	if len(snap.Windows) != 4 {
		t.Fatalf("%d windows", len(snap.Windows))
	}
	for _, w := range snap.Windows {
		exp, ok := want[w.Seconds]
		if !ok {
			continue
		}
		if math.Abs(w.GCPausedPercent-exp[0]) > 1e-9 || math.Abs(w.SuspendedPercent-exp[1]) > 1e-9 {
			t.Errorf("window %vs: gc %.9f%% suspended %.9f%%, want %v%% and %v%%", w.Seconds, w.GCPausedPercent, w.SuspendedPercent, exp[0], exp[1])
		}
	}
}

// TestWindowsExact: stopped time over the last 1, 10 and 60 s and since the
// start, with suspensions that overlap (two threads), nest (one ends inside
// another) and straddle a window's edge, and one still in progress.
func TestWindowsExact(t *testing.T) {
	s := newSynth(monitor.Options{})
	s.tick(0)
	s.suspend(1.0, 1, clrevents.SuspendForGC) // A: GC [1.0, 1.2]
	s.suspend(1.1, 2, clrevents.SuspendOther) // B: [1.1, 1.5], overlaps A
	s.restart(1.2, 1)
	s.restart(1.5, 2)
	s.suspend(5.0, 1, clrevents.SuspendForGC) // C: GC [5.0, 5.05]
	s.restart(5.05, 1)
	s.suspend(8.9, 6, clrevents.SuspendForGCPrep) // G: GC [8.9, 9.4]
	s.restart(9.4, 6)
	s.suspend(9.5, 3, clrevents.SuspendForDebugger) // D: [9.5, 9.8]
	s.suspend(9.6, 4, clrevents.SuspendOther)       // E: [9.6, 9.7], inside D
	s.restart(9.7, 4)
	s.restart(9.8, 3)
	s.tick(10)
	// GC stops: A 0.2 + C 0.05 + G 0.5 = 0.75 s; any stop: A∪B 0.5 + C
	// 0.05 + G 0.5 + D 0.3 = 1.35 s. Last second (9, 10]: G's 0.4 s, D.
	checkWindows(t, s.m.Snapshot(), map[float64][2]float64{
		1: {40, 70}, 10: {7.5, 13.5}, 60: {7.5, 13.5}, 0: {7.5, 13.5},
	})

	s.suspend(9.9+0.0, 5, clrevents.SuspendForGC) // F: GC from 9.9, still open
	s.tick(10.0)
	snap := s.m.Snapshot()
	checkWindows(t, snap, map[float64][2]float64{
		1: {50, 80}, 10: {8.5, 14.5}, 0: {8.5, 14.5},
	})
	if snap.Windows[0].CoveredSec != 1 || snap.Windows[2].CoveredSec != 10 || snap.Windows[3].Seconds != 0 {
		t.Errorf("covered %+v", snap.Windows)
	}

	s.restart(10.2, 5)
	// (9.2, 10.2]: G 0.2, F 0.3 for GCs; plus D 0.3 for any stop.
	checkWindows(t, s.m.Snapshot(), map[float64][2]float64{
		1: {50, 80}, 10: {(0.75 + 0.3) * 10, (1.35 + 0.3) * 10},
	})
	s.tick(70.2)
	// The last minute (10.2, 70.2] is empty; since the start 1.05 s of GC
	// stops in 70.2 s.
	snap = s.m.Snapshot()
	checkWindows(t, snap, map[float64][2]float64{
		1: {0, 0}, 10: {0, 0}, 60: {0, 0}, 0: {1.05 * 100 / 70.2, 1.65 * 100 / 70.2},
	})
	// gcpause's rows, as a file's report has them.
	byReason := map[clrevents.SuspendReason]gcpause.ReasonRollup{}
	for _, r := range snap.GC.SuspensionsByReason {
		byReason[r.Reason] = r
	}
	msOf := func(ns int64) float64 { return float64(ns) / 1e6 }
	if o := byReason[clrevents.SuspendOther]; o.Count != 2 || math.Abs(msOf(o.TotalNanos)-500) > 1e-6 || math.Abs(msOf(o.MaxNanos)-400) > 1e-6 {
		t.Errorf("SuspendOther: %+v", o)
	}
	if d := byReason[clrevents.SuspendForDebugger]; d.Count != 1 || math.Abs(msOf(d.TotalNanos)-300) > 1e-6 {
		t.Errorf("debugger: %+v", d)
	}
	// GC suspensions are listed too, as a file's report lists them.
	if g, p := byReason[clrevents.SuspendForGC], byReason[clrevents.SuspendForGCPrep]; g.Count != 3 || math.Abs(msOf(g.TotalNanos)-550) > 1e-6 ||
		p.Count != 1 || math.Abs(msOf(p.TotalNanos)-500) > 1e-6 || len(snap.GC.SuspensionsByReason) != 4 {
		t.Errorf("by reason misses the GC suspensions or another: %+v", snap.GC.SuspensionsByReason)
	}
	if snap.Session.ElapsedSec != 70.2 || snap.Session.Events != 18 {
		t.Errorf("session %+v", snap.Session)
	}
}

// TestWindowLostRestart: a suspension whose RestartEEEnd was lost (the
// thread suspends again) counts as incomplete, not as stopped time.
func TestWindowLostRestart(t *testing.T) {
	s := newSynth(monitor.Options{})
	s.tick(0)
	s.suspend(1, 1, clrevents.SuspendForDebugger)
	s.suspend(2, 1, clrevents.SuspendForDebugger)
	s.restart(2.5, 1)
	s.tick(10)
	snap := s.m.Snapshot()
	checkWindows(t, snap, map[float64][2]float64{10: {0, 5}, 0: {0, 5}})
	if r := snap.GC.SuspensionsByReason; len(r) != 1 || r[0].Count != 2 || r[0].Incomplete != 1 {
		t.Errorf("by reason %+v", r)
	}
	// The rows: gcpause's, the reason typed (written by name).
	if r := snap.Suspensions; len(r) != 2 || r[0].Reason != clrevents.SuspendForDebugger || !r[0].Incomplete || r[0].StartMS != 1000 ||
		r[1].Incomplete || r[1].StartMS != 2000 || math.Abs(r[1].PauseMS-500) > 1e-6 {
		t.Errorf("suspension rows %+v", r)
	} else if b, _ := json.Marshal(r[1]); !strings.Contains(string(b), `"reason":"SuspendForDebugger","start_ms":2000,`) {
		t.Errorf("suspension row JSON %s", b)
	}
}
