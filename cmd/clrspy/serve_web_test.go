package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/internal/workload"
	"github.com/clrspy/clrspy/report"
)

// webMessage is what the live page receives over its websocket.
type webMessage struct {
	Type string `json:"type"`
	Page *struct {
		GCs *report.GCColumns `json:"gcs"`
	} `json:"page"`
	GCs     *report.GCColumns `json:"gcs"`
	Summary *gcpause.Summary  `json:"summary"`
}

// TestServeWeb: `clrspy serve --web` serves the live view at / beside
// /metrics, fed by serve's own monitor of each process (no second
// session). A workload in listen mode is listed in targets.json with its
// pid and name; a page subscribed before the workload starts its GCs
// receives them as rows, in several updates while it runs, each GC once,
// and as many as the runtime's own GC.CollectionCount(0) (every GC counts
// in gen0's count), per generation too. The tolerance is zero: in listen
// mode the runtime waits suspended until serve's session is open, so the
// session sees every GC of the process (TestServePrometheus holds serve's
// metrics to the same), and the view drops no row (a page that falls
// behind gets the rows with the next update).
func TestServeWeb(t *testing.T) {
	dir := t.TempDir()
	path, name := aliasWorkload(t, dir, "SvW")
	port := filepath.Join(dir, "port.sock")
	s := startServe(t, "--web", "--name", name, "--attach=false", "--diagnostic-port", port, "--level", "warn")
	base := "http://" + s.addr

	// A browser gets the page at /, curl the list of endpoints.
	req, _ := http.NewRequest("GET", base+"/", nil)
	req.Header.Set("Accept", "text/html,application/xhtml+xml")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || !strings.HasPrefix(ct, "text/html") {
		t.Errorf("GET / as a browser: %s, %s", resp.Status, ct)
	}
	if idx := string(httpGet(t, base+"/")); !strings.Contains(idx, "/metrics") || !strings.Contains(idx, "live web view") {
		t.Errorf("GET / without Accept: text/html:\n%s", idx)
	}

	// Churn for 2 s (natural GCs at the allocation rate) once released.
	p := workload.StartCmd(t, exec.Command(path, "churn", "seconds=2", "wait=1"), []string{"DOTNET_DiagnosticPorts=" + port})
	type target struct {
		ID    string `json:"id"`
		Name  string `json:"name"`
		Pid   int    `json:"pid"`
		Ended bool   `json:"ended"`
	}
	var tg target
	deadline := time.Now().Add(20 * time.Second)
	for tg.ID == "" && time.Now().Before(deadline) {
		var ts []target
		if err := json.Unmarshal(httpGet(t, base+"/targets.json"), &ts); err != nil {
			t.Fatal(err)
		}
		for _, x := range ts {
			if x.Pid == p.Pid {
				tg = x
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	if tg.ID == "" || tg.Name != name || tg.Ended {
		t.Fatalf("targets.json: pid %d listed as %+v", p.Pid, tg)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws://"+s.addr+"/ws?target="+tg.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	c.SetReadLimit(64 << 20)
	read := func() (webMessage, bool) {
		_, b, err := c.Read(ctx)
		if err != nil {
			if websocket.CloseStatus(err) != websocket.StatusNormalClosure {
				t.Fatalf("websocket: %v", err)
			}
			return webMessage{}, false
		}
		var m webMessage
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m, true
	}
	seen := map[uint32]int{}
	count := func(g *report.GCColumns) {
		if g != nil {
			for _, n := range g.Number {
				seen[n]++
			}
		}
	}
	first, _ := read()
	if first.Type != "snapshot" || first.Page == nil {
		t.Fatalf("first message %q", first.Type)
	}
	count(first.Page.GCs)
	p.Release()
	var last webMessage
	batches := 0
	for {
		m, ok := read()
		if !ok {
			break
		}
		if m.GCs != nil && m.GCs.Len() > 0 && m.Type == "update" {
			batches++
		}
		count(m.GCs)
		last = m
	}
	res, err := p.Wait(2 * time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if last.Type != "end" || last.Summary == nil {
		t.Fatalf("last message %q, want the end of the session", last.Type)
	}
	t.Logf("%d GCs in %d updates; the runtime counted %d", len(seen), batches, res.Gen0)
	if res.Gen0 < 10 {
		t.Fatalf("the workload made %d GCs: not a useful check", res.Gen0)
	}
	if len(seen) != res.Gen0 {
		t.Errorf("%d GC rows, the runtime counted %d GCs", len(seen), res.Gen0)
	}
	for n, k := range seen {
		if k != 1 {
			t.Errorf("GC %d sent %d times", n, k)
		}
	}
	// Rows are sent every 250 ms while GCs happen: a 2 s run gives
	// several batches even when the machine's load delays serve's ticks.
	if batches < 2 {
		t.Errorf("the rows came in %d update(s), want them while the workload ran", batches)
	}
	sum := last.Summary
	want := exclusive(res.Gen0, res.Gen1, res.Gen2)
	got := [3]int{sum.ByGeneration["gen0"].Count, sum.ByGeneration["gen1"].Count, sum.ByGeneration["gen2"].Count}
	if got != want || sum.GCCount+sum.Incomplete != res.Gen0 {
		t.Errorf("rollup: %d GCs (%d incomplete), per generation %v; the runtime counted %v", sum.GCCount, sum.Incomplete, got, want)
	}
}
