package serve

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clrspy/clrspy/internal/fleet"
	"github.com/clrspy/clrspy/internal/monitor"
	"github.com/clrspy/clrspy/triage"
)

// TestTriageSnapshotGC: a heap snapshot taken during a /triage window is
// the tool's GC, not the application's: the snapshot session's gcpause
// marks it (HeapDump), /triage names it (snapshot_gc) and counts no
// induced GC (the idle graph workload calls no GC.Collect after it is
// ready), and clrspy_findings' facts keep it out of the induced count
// too, where without the mark they count it; the pause log marks it
// heap_snapshot, not induced.
func TestTriageSnapshotGC(t *testing.T) {
	gs := startGraphServe(t, Config{Config: fleet.Config{CounterInterval: time.Second}})
	d, log, h, p, pid := gs.d, gs.log, gs.h, gs.p, gs.pid
	judged := make(chan []byte, 1)
	go func() { judged <- get(t, h, "/triage?pid="+pid+"&seconds=6").Body.Bytes() }()
	time.Sleep(time.Second)
	if rec := get(t, h, "/debug/pprof/heap?pid="+pid); rec.Code != 200 {
		t.Fatalf("heap: %d %s", rec.Code, rec.Body)
	}
	tg := d.lookup(pid)
	dumps := tg.HeapDumps()
	if len(dumps) != 1 || dumps[0] == 0 {
		t.Fatalf("snapshot GCs recorded %v, want the one snapshot's", dumps)
	}
	var doc struct {
		Findings []triage.Finding `json:"findings"`
		Facts    triage.Facts     `json:"facts"`
	}
	body := <-judged
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	if g := doc.Facts.GC; g.SnapshotGC != dumps[0] || g.Induced != 0 || g.Gen2Blocking != 0 {
		t.Errorf("/triage: snapshot GC %d (the snapshot's was %d), induced %d, blocking gen2 %d; want the snapshot's GC named and none of the application's",
			g.SnapshotGC, dumps[0], g.Induced, g.Gen2Blocking)
	}
	for _, f := range doc.Findings {
		if f.Rule == "gc.induced_per_min" || f.Rule == "gc.gen2_blocking_per_min" {
			t.Errorf("/triage: %s %s from the snapshot's own GC", f.Rule, f.Title)
		}
	}
	snap := tg.Session().Monitor().Snapshot()
	with := monitor.TriageFacts(snap, monitor.TriageEnv{HeapDumpGCs: dumps, CPUDemandPct: -1})
	without := monitor.TriageFacts(snap, monitor.TriageEnv{CPUDemandPct: -1})
	if without.GC.Induced != with.GC.Induced+1 || with.GC.SnapshotGC != dumps[0] {
		t.Errorf("clrspy_findings' facts: induced %d with the mark, %d without (snapshot GC %d); want one fewer with it",
			with.GC.Induced, without.GC.Induced, with.GC.SnapshotGC)
	}
	// The pause log says whose GC it was, and the snapshot's line names it.
	var pauseLine, takenLine string
	gcAttr := "gc=" + strconv.Itoa(int(dumps[0])) + " "
	for _, l := range strings.Split(log.String(), "\n") {
		switch {
		case strings.Contains(l, "GC pause") && strings.Contains(l, gcAttr):
			pauseLine = l
		case strings.Contains(l, "heap snapshot taken"):
			takenLine = l
		}
	}
	if !strings.Contains(pauseLine, "heap_snapshot=true") || strings.Contains(pauseLine, "induced=true") || !strings.Contains(takenLine, gcAttr) {
		t.Errorf("the snapshot's GC in the log:\n%s\n%s", pauseLine, takenLine)
	}
	p.Stdin("exit\n")
	p.Wait(30 * time.Second)
}
