package top_test

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/clrspy/clrspy/internal/monitor"
	"github.com/clrspy/clrspy/internal/top"
	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/internal/tui"
	"github.com/clrspy/clrspy/source"
)

// syncBuffer is a bytes.Buffer safe for the program's and the test's
// goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestRunTraceFile runs the program over a trace file with keys from a
// pipe and the terminal a buffer: the file ends at once, the frame stays
// with "end of trace" until q; the snapshot lines end with the final
// figures (gc-wks: 27 gen0, 8 gen1 and 5 gen2 GCs, as the runtime counted
// them).
func TestRunTraceFile(t *testing.T) {
	st, err := source.Open(source.Spec{File: tracetest.Path(t, "gc-wks.nettrace")})
	if err != nil {
		t.Fatal(err)
	}
	mon := monitor.New(st.Header(), monitor.Options{})
	in, keys := io.Pipe()
	var out, snaps syncBuffer
	type ran struct {
		res top.Result
		err error
	}
	done := make(chan ran, 1)
	go func() {
		res, err := top.Run(t.Context(), top.Options{
			Stream: st, Monitor: mon, Input: in, Output: &out, Refresh: 20 * time.Millisecond,
			SnapshotEvery: 20 * time.Millisecond, SnapshotOut: &snaps, View: tui.Options{},
			ProgramOptions: []tea.ProgramOption{tea.WithoutSignalHandler()},
		})
		done <- ran{res, err}
	}()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(snaps.String(), `"state":"ended"`) || !strings.Contains(out.String(), "end of trace") {
		if time.Now().After(deadline) {
			t.Fatalf("no end of trace on the screen:\n%s\nsnapshots:\n%s", out.String(), snaps.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	lines := strings.Count(snaps.String(), "\n")
	time.Sleep(100 * time.Millisecond)
	if n := strings.Count(snaps.String(), "\n"); n != lines {
		t.Errorf("snapshot lines go on after the end: %d, then %d", lines, n)
	}
	keys.Write([]byte("q"))
	var r ran
	select {
	case r = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("q did not end the program")
	}
	if r.err != nil || r.res.Err != nil || r.res.Quit || r.res.TargetRunning || r.res.Frames == 0 || r.res.SnapshotErr != nil {
		t.Errorf("result %+v, err %v", r.res, r.err)
	}
	if s := out.String(); !strings.Contains(s, "GCs gen0 27  gen1 8  gen2 5  all 40") {
		t.Errorf("screen output lacks the counts:\n%s", s)
	}
	all := strings.Split(strings.TrimSpace(snaps.String()), "\n")
	var last tui.Screen
	if err := json.Unmarshal([]byte(all[len(all)-1]), &last); err != nil {
		t.Fatal(err)
	}
	if c := last.GCCounts; c.Gen0 != 27 || c.Gen1 != 8 || c.Gen2 != 5 || last.State != "ended" || last.Message != "end of trace" || len(last.Rows) == 0 {
		t.Errorf("last snapshot: %+v", last)
	}
}
