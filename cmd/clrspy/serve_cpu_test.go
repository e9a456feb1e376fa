package main

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/clrspy/clrspy/internal/workload"
	"github.com/clrspy/clrspy/report"
)

// TestServeWebCPUProfile: `clrspy serve --web --cpu-profile` gives the
// live page a flame graph made by the perf sampler, one per window (2 s
// here, at 99 Hz): the mixed workload's page receives one titled "CPU"
// with its managed methods under Mixed.Run and the libc functions they
// call (memset under Fill: mixed-mode stacks, which the runtime's sampler
// cannot see), for a window of the session's time.
func TestServeWebCPUProfile(t *testing.T) {
	p := workload.Start(t, nil, "mixed", "seconds=8", "wait=1")
	s := startServe(t, "--web", "--cpu-profile", "--cpu-profile-hz", "99", "--cpu-profile-window", "2s", "--pid", strconv.Itoa(p.Pid), "--level", "warn")
	base := "http://" + s.addr
	type target struct {
		ID  string `json:"id"`
		Pid int    `json:"pid"`
	}
	var id string
	deadline := time.Now().Add(30 * time.Second)
	for id == "" {
		if time.Now().After(deadline) {
			t.Fatal("the workload is not in targets.json after 30 s")
		}
		var ts []target
		if err := json.Unmarshal(httpGet(t, base+"/targets.json"), &ts); err != nil {
			t.Fatal(err)
		}
		for _, x := range ts {
			if x.Pid == p.Pid {
				id = x.ID
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	p.Release()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws://"+s.addr+"/ws?target="+id, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	c.SetReadLimit(64 << 20)
	var flame *report.Flame
	for flame == nil {
		_, b, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("websocket: %v (no flame graph arrived)", err)
		}
		var m struct {
			Type string        `json:"type"`
			CPU  *report.Flame `json:"cpu"`
			Page *struct {
				CPU *report.Flame `json:"cpu"`
			} `json:"page"`
		}
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		switch {
		case m.CPU != nil:
			flame = m.CPU
		case m.Page != nil && m.Page.CPU != nil:
			flame = m.Page.CPU
		}
		if flame != nil && !strings.Contains(strings.Join(flame.Frames, "\n"), "Workload.Mixed.Run(") {
			flame = nil // a window before the workload's loop started
		}
		if m.Type == "end" && flame == nil {
			t.Fatal("the session ended without a flame graph of the workload's loop")
		}
	}
	frames := strings.Join(flame.Frames, "\n")
	t.Logf("flame %q: %d samples, %d frames, window %.0f–%.0f ms", flame.Label, flame.Total, len(flame.Frames), flame.FromMS, flame.ToMS)
	if flame.Label != report.LabelCPU {
		t.Errorf("label %q, want %q", flame.Label, report.LabelCPU)
	}
	for _, want := range []string{"Workload.MixedKernels.Fill(unsigned int8)", "Workload.MixedKernels.Managed(int32)", "memset"} {
		if !strings.Contains(frames, want) {
			t.Errorf("no frame %s in the flame graph", want)
		}
	}
	if flame.Total < 20 || flame.ToMS <= flame.FromMS {
		t.Errorf("%d samples over %.0f–%.0f ms", flame.Total, flame.FromMS, flame.ToMS)
	}
}
