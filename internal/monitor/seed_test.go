package monitor_test

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/counters"
	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/internal/monitor"
	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/source"
)

// lastRaw keeps the raw timestamp of the latest event.
type lastRaw struct{ ts int64 }

func (l *lastRaw) Event(ev *nettrace.Event) { l.ts = max(l.ts, ev.Timestamp) }
func (l *lastRaw) Stats() analysis.Stats    { return analysis.Stats{} }

// meterTotals is a publication of the runtime meter's totals since the
// process start, as another session's counters hold it.
func meterTotals(gens [3]int, pauseMS float64) *counters.Result {
	r := &counters.Result{Meter: true}
	for g, n := range gens {
		r.Metrics = append(r.Metrics, counters.Metric{Name: "dotnet.gc.collections", Value: float64(n), FromStart: true, Source: counters.SourceMeter,
			Attributes: []counters.Attribute{{Key: counters.AttrGeneration, Value: []string{"gen0", "gen1", "gen2"}[g]}}})
	}
	r.Metrics = append(r.Metrics, counters.Metric{Name: "dotnet.gc.pause.time", Value: pauseMS / 1e3, FromStart: true, Source: counters.SourceMeter})
	return r
}

// TestSeedFromNumbering: a session that began after the process's first
// GCs (the fixture's session saw GCs numbered from first on) says how many
// came before by the GC events' numbering (NumberedBefore), and takes what
// the runtime counted before it from another session's meter
// (SeedFrom): the meter's totals less the session's own GCs, only from a
// publication that adds up to the numbering, once the session's events
// reached the publication's time; two that agree end the seeding.
func TestSeedFromNumbering(t *testing.T) {
	// The attach fixture: its session began after the process's tenth GC.
	path := filepath.Join(t.TempDir(), "gc-bgc-attach.nettrace")
	in, err := os.Open(tracetest.Path(t, "gc-bgc-attach.nettrace.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	z, err := gzip.NewReader(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, z); err != nil {
		t.Fatal(err)
	}
	out.Close()
	st, err := source.Open(source.Spec{File: path})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	gc := gcpause.New(st.Header(), gcpause.Options{})
	m := monitor.New(st.Header(), monitor.Options{NoCounters: true})
	last := &lastRaw{}
	if _, err := st.Run(gc, m, last); err != nil {
		t.Fatal(err)
	}
	res := gc.Result()
	first := res.GCs[0].Number
	for _, g := range res.GCs {
		first = min(first, g.Number)
	}
	snap := m.Snapshot()
	seen := [3]int{snap.GC.Gen(0).Count, snap.GC.Gen(1).Count, snap.GC.Gen(2).Count}
	t.Logf("first GC %d, session counted %v, runtime pause %.3f ms", first, seen, snap.GC.TotalPauseRuntimeMS)
	if first != 11 || snap.GC.NumberedBefore != 10 || snap.GC.BeforeSession != nil || !m.NeedsSeed() {
		t.Fatalf("numbered before %d (first GC %d), before session %+v, needs seed %v", snap.GC.NumberedBefore, first, snap.GC.BeforeSession, m.NeedsSeed())
	}
	// The ten GCs before the session: 6 gen0, 3 gen1, 1 gen2.
	before := [3]int{6, 3, 1}
	pub := [3]int{seen[0] + before[0], seen[1] + before[1], seen[2] + before[2]}
	// Not yet reached: the session's events end before the publication.
	if !m.SeedFrom(meterTotals(pub, snap.GC.TotalPauseRuntimeMS+50), last.ts+1) || m.Snapshot().GC.BeforeSession != nil {
		t.Fatalf("a publication after the session's last event applied: %+v", m.Snapshot().GC.BeforeSession)
	}
	// A publication one GC off the numbering (gen1 read after a GC
	// the gen0 read missed) is not taken.
	off := pub
	off[1]++
	m.SeedFrom(meterTotals(off, snap.GC.TotalPauseRuntimeMS+50), last.ts)
	if b := m.Snapshot().GC.BeforeSession; b != nil {
		t.Fatalf("a publication off the numbering was taken: %+v", b)
	}
	m.SeedFrom(meterTotals(pub, snap.GC.TotalPauseRuntimeMS+50), last.ts)
	b := m.Snapshot().GC.BeforeSession
	if b == nil || b.Generations != before || b.PauseRuntimeMS < 49.999 || b.PauseRuntimeMS > 50.001 || m.Seeded() {
		t.Fatalf("seed %+v (seeded %v), want %v and 50 ms, not yet final", b, m.Seeded(), before)
	}
	m.SeedFrom(meterTotals(pub, snap.GC.TotalPauseRuntimeMS+50), last.ts)
	if !m.Seeded() || m.NeedsSeed() {
		t.Errorf("two agreeing publications: seeded %v, needs seed %v", m.Seeded(), m.NeedsSeed())
	}

	// A publication from when the runtime had counted 30 GCs, applied
	// after the session counted GCs up to the 35th: the session's GCs
	// numbered 31 on are not in it, and are not taken off.
	st2, err := source.Open(source.Spec{File: path})
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	m2 := monitor.New(st2.Header(), monitor.Options{NoCounters: true})
	if _, err := st2.Run(m2); err != nil {
		t.Fatal(err)
	}
	var upTo30 [3]int
	var pauseUpTo30 float64
	for _, g := range res.GCs {
		if g.Complete && g.Number <= 30 {
			upTo30[g.Generation]++
			pauseUpTo30 += float64(g.PauseRuntimeNanos) / 1e6
		}
	}
	early := [3]int{upTo30[0] + before[0], upTo30[1] + before[1], upTo30[2] + before[2]}
	if early[0]+early[1]+early[2] != 30 {
		t.Fatalf("GCs 11..30 by generation %v: not 20 complete", upTo30)
	}
	m2.SeedFrom(meterTotals(early, pauseUpTo30+50), last.ts)
	if b := m2.Snapshot().GC.BeforeSession; b == nil || b.Generations != before || b.PauseRuntimeMS < 49.99 || b.PauseRuntimeMS > 50.01 {
		t.Errorf("seed from the 30th GC's publication %+v, want %v and 50 ms", b, before)
	}
}
