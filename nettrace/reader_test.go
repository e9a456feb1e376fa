package nettrace

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestProcessorNumbers reproduces TraceEvent's V4EventPipeFileHasProcNumbers:
// every runtime and private-provider event of the objver4 trace (runtime
// MethodILToNativeMap excluded) has a processor number in 0..3, and each of
// the 4 processors has at least one event.
func TestProcessorNumbers(t *testing.T) {
	r := openTrace(t, "perfview__eventpipe-dotnetcore3.0-win-x64-objver4.nettrace")
	var perCPU [4]int
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		m := ev.Meta
		if (m.Runtime != Runtime && m.Runtime != Private) || (m.Runtime == Runtime && m.EventID == 190) {
			continue
		}
		if ev.ProcessorNumber > 3 {
			t.Fatalf("%s at %d: processor %d", m.Name, ev.Timestamp, ev.ProcessorNumber)
		}
		perCPU[ev.ProcessorNumber]++
	}
	for cpu, n := range perCPU {
		if n == 0 {
			t.Errorf("processor %d has no event", cpu)
		}
	}
}

// TestLostEventsAtSequencePoint: the webapp trace's sampler thread wrote
// sequence number 9074 last, and a later sequence point says the thread had
// reached 11310: the runtime dropped 2,236 events (TraceEvent's sequence
// point check reports the same number).
func TestLostEventsAtSequencePoint(t *testing.T) {
	r := openTrace(t, "dotnetdiag__dotnet-5.0-SampleProfiler-webapp.golden.nettrace")
	var attributed uint64
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		attributed += uint64(ev.LostBefore)
	}
	if got := r.Stats().LostEvents; got != 2236 {
		t.Errorf("lost events %d, want 2236", got)
	}
	// The gap shows at a sequence point after the sampler thread's last
	// event, so no later event can carry it in LostBefore: only Stats has it.
	if attributed != 0 {
		t.Errorf("lost events attributed to later events: %d, want 0", attributed)
	}
}

// TestTimeConversion: conversions must not overflow for long sessions at
// any clock frequency.
func TestTimeConversion(t *testing.T) {
	h := Header{SyncTimeUTC: time.Date(2019, 6, 15, 23, 56, 59, 754e6, time.UTC), SyncTimeQPC: 100935252313, QPCFrequency: 3124099}
	// 30 days of ticks at 3.12 MHz: ticks*1e9 would overflow int64.
	ticks := int64(30*24*3600) * 3124099
	if got, want := h.Nanos(h.SyncTimeQPC+ticks), int64(30*24*3600)*1e9; got != want {
		t.Errorf("Nanos = %d, want %d", got, want)
	}
	if got := h.Nanos(h.SyncTimeQPC - 3124099); got != -1e9 {
		t.Errorf("Nanos before sync = %d, want -1e9", got)
	}
	if got := h.Time(h.SyncTimeQPC + 3124099/2); !got.Equal(h.SyncTimeUTC.Add(499999839)) {
		t.Errorf("Time = %v", got)
	}
	if got := h.DurationNanos(3124099 * 2); got != 2e9 {
		t.Errorf("DurationNanos = %d", got)
	}
}

// TestReset: one Reader, Reset between streams of every container (V3, V4
// compressed and uncompressed, V6, a truncated stream) and abandoned half
// way through some of them, delivers exactly what a fresh Reader delivers
// on each: the queues, chunks and block buffers it keeps carry nothing over.
func TestReset(t *testing.T) {
	src := filepath.Join(tracesDir, trace30)
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	_, _, copies := copyTrace(t, bytes.NewReader(data),
		WriterOptions{Format: FormatNetTraceV6}, WriterOptions{Uncompressed: true})
	v3, err := os.ReadFile(filepath.Join(tracesDir, "perfview__eventpipe-dotnetcore2.1-linux-x64-objver3.netperf"))
	if err != nil {
		t.Fatal(err)
	}
	streams := []struct {
		name  string
		data  []byte
		stop  int // events read before the next Reset; 0 reads all
		total int // events a full read delivers
	}{
		{"3.0", data, 0, 105540},
		{"v6 copy", copies[0], 7000, 105540},
		{"netperf v3", v3, 0, 0},
		{"uncompressed copy", copies[1], 0, 105540},
		{"3.0 truncated", data[:len(data)/2], 0, 0},
		{"3.0 again", data, 50000, 105540},
		{"3.0 once more", data, 0, 105540},
	}
	var rd *Reader
	for _, s := range streams {
		want, fresh, wantErr := readEvents(t, bytes.NewReader(s.data))
		if s.total != 0 && len(want) != s.total {
			t.Fatalf("%s: fresh reader delivered %d events, want %d", s.name, len(want), s.total)
		}
		if rd == nil {
			rd, err = NewReader(bytes.NewReader(s.data))
		} else {
			err = rd.Reset(bytes.NewReader(s.data))
		}
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		var got []rtEvent
		for s.stop == 0 || len(got) < s.stop {
			ev, err := rd.Next()
			if err != nil {
				if (err == io.EOF) != (wantErr == io.EOF) || errors.Is(err, ErrTruncated) != errors.Is(wantErr, ErrTruncated) {
					t.Errorf("%s: ended with %v, a fresh reader with %v", s.name, err, wantErr)
				}
				break
			}
			got = append(got, snapshot(ev))
		}
		if s.stop != 0 {
			want = want[:s.stop]
		} else if gs, ws := *rd.Stats(), *fresh.Stats(); gs.Events != ws.Events || gs.EventsWithStack != ws.EventsWithStack ||
			gs.LostEvents != ws.LostEvents || gs.Metadata != ws.Metadata || gs.Stacks != ws.Stacks || gs.Truncated != ws.Truncated {
			t.Errorf("%s: stats after Reset %+v, fresh %+v", s.name, gs, ws)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d events after Reset, fresh reader %d", s.name, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s: event %d after Reset differs:\n got %+v\nwant %+v", s.name, i, got[i], want[i])
			}
		}
	}
}
