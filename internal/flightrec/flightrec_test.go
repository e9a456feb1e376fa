package flightrec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/nettrace"
)

// A 1 GHz clock starting at 0: timestamps are nanoseconds.
var hdr = &nettrace.Header{QPCFrequency: 1_000_000_000, PointerSize: 8, ProcessID: 7,
	SyncTimeUTC: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}

var (
	metaTick = &nettrace.Metadata{ID: 1, Provider: "Test", EventID: 1, EventName: "Tick"}
	metaLoad = &nettrace.Metadata{ID: 2, Provider: nettrace.ProviderRuntime, EventID: clrevents.IDMethodLoadVerbose,
		Runtime: nettrace.Runtime, Version: 1}
)

var (
	metaSuspend = &nettrace.Metadata{ID: 3, Provider: nettrace.ProviderRuntime, EventID: clrevents.IDGCSuspendEEBegin,
		Runtime: nettrace.Runtime, Version: 1}
	metaGCStart = &nettrace.Metadata{ID: 4, Provider: nettrace.ProviderRuntime, EventID: clrevents.IDGCStart,
		Runtime: nettrace.Runtime, Version: 1}
)

// gcBegins is what the runtime writes as a GC's pause begins: the
// suspension, then GCStart with the GC's number.
func gcBegins(p *PauseTrigger, n uint32, ms int64) {
	p.Event(&nettrace.Event{Meta: metaSuspend, Timestamp: ms * 1e6, ThreadID: 2, CaptureThreadID: 2, Payload: make([]byte, 10)})
	p.GCStart(&gcpause.GC{Number: n, PauseStartNanos: ms * 1e6}) // gcpause, fed first, reads the GCStart
	start := binary.LittleEndian.AppendUint32(nil, n)
	start = append(start, make([]byte, 14)...)
	p.Event(&nettrace.Event{Meta: metaGCStart, Timestamp: ms*1e6 + 1, ThreadID: 2, CaptureThreadID: 2, Payload: start})
}

func ev(m *nettrace.Metadata, ms int64, tag byte) *nettrace.Event {
	return &nettrace.Event{Meta: m, Timestamp: ms * 1e6, ThreadID: 1, CaptureThreadID: 1, Payload: []byte{tag, 1, 2, 3}}
}

// readBack reads a written window: the timestamps (ms) and first payload
// byte of every event.
func readBack(t *testing.T, b []byte) []string {
	t.Helper()
	r, err := nettrace.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for {
		e, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("written window does not read back: %v", err)
		}
		out = append(out, fmt.Sprintf("%d:%d", e.Timestamp/1e6, e.Payload[0]))
	}
}

// TestRecorderWindow: events older than MinAge go, except the sticky
// method loads; a window from a timestamp on is a readable trace.
func TestRecorderWindow(t *testing.T) {
	r := New(hdr, Options{MinAge: 100 * time.Millisecond})
	r.Event(ev(metaLoad, 0, 9))
	for ms := int64(10); ms <= 300; ms += 10 {
		tick := ev(metaTick, ms, byte(ms/10))
		r.Event(tick)
		tick.Payload[0] = 0xFF // the reader reuses memory: the ring must have copied
	}
	var buf bytes.Buffer
	n, err := r.WriteTo(&buf, 250*1e6)
	if err != nil {
		t.Fatal(err)
	}
	got := readBack(t, buf.Bytes())
	want := "[0:9 250:25 260:26 270:27 280:28 290:29 300:30]"
	if fmt.Sprint(got) != want || n != 7 {
		t.Errorf("window %v (%d events), want %s", got, n, want)
	}
	// Everything kept: the last 100 ms (200..300) and the method load.
	buf.Reset()
	r.WriteTo(&buf, 0)
	if got := readBack(t, buf.Bytes()); len(got) != 1+11 || got[1] != "200:20" {
		t.Errorf("ring holds %v, want the load and 200..300 ms", got)
	}
	if st := r.Stats(); st.Events != 31 {
		t.Errorf("stats %+v", st)
	}
}

// TestRecorderMaxBytes: the byte bound evicts whatever the age.
func TestRecorderMaxBytes(t *testing.T) {
	r := New(hdr, Options{MinAge: time.Hour, MaxBytes: 10 * (4 + eventOverhead)})
	for ms := int64(1); ms <= 100; ms++ {
		r.Event(ev(metaTick, ms, byte(ms)))
	}
	var buf bytes.Buffer
	r.WriteTo(&buf, 0)
	got := readBack(t, buf.Bytes())
	if len(got) != 10 || got[0] != "91:91" || r.Bytes() > 10*(4+eventOverhead) {
		t.Errorf("ring %v, %d bytes", got, r.Bytes())
	}
}

type memFile struct {
	bytes.Buffer
	closed, aborted bool
}

func (m *memFile) Close() error { m.closed = true; return nil }
func (m *memFile) Abort() error { m.aborted = true; return nil }

func gc(n uint32, startMS, endMS int64) *gcpause.GC {
	return &gcpause.GC{Number: n, Complete: true, PauseStartNanos: startMS * 1e6, PauseEndNanos: endMS * 1e6,
		PauseNanos: (endMS - startMS) * 1e6}
}

// TestPauseTrigger: a pause over the threshold is saved once the stream is
// After past its end, with Before of history; shorter pauses are not;
// without Rearm the trigger is done after one save.
func TestPauseTrigger(t *testing.T) {
	var files []*memFile
	var names []string
	done := 0
	p := NewPauseTrigger(hdr, TriggerOptions{Over: 50 * time.Millisecond, Before: 30 * time.Millisecond, After: 20 * time.Millisecond,
		Create: func(n int, g *gcpause.GC) (io.WriteCloser, string, error) {
			f := &memFile{}
			files = append(files, f)
			names = append(names, fmt.Sprintf("save %d of GC %d", n, g.Number))
			return f, names[len(names)-1], nil
		},
		Done: func() { done++ }})
	for ms := int64(0); ms <= 400; ms += 10 {
		p.Event(ev(metaTick, ms, byte(ms/10)))
		switch ms {
		case 120:
			gcBegins(p, 1, 120)
		case 200:
			gcBegins(p, 2, 200)
		case 280:
			gcBegins(p, 3, 280)
		case 150:
			p.GC(gc(1, 120, 150)) // 30 ms: under the threshold
		case 260:
			p.GC(gc(2, 200, 260)) // 60 ms: saved at the first event after 280
		case 350:
			p.GC(gc(3, 280, 350)) // after the save: the trigger is done
		}
	}
	p.Finish()
	if len(files) != 1 || done != 1 || p.Saved() != 1 || names[0] != "save 1 of GC 2" || !files[0].closed {
		t.Fatalf("saves %v, done %d", names, done)
	}
	// The window runs from Before (30 ms) ahead of the pause's start, though
	// the pause (60 ms) is longer than Before: the trigger held the ring
	// while the GC ran. Its SuspendEEBegin (tag 0) and GCStart (tag: its
	// number) are in it, so is GC 3's suspension at the window's end.
	got := readBack(t, files[0].Bytes())
	if fmt.Sprint(got) != "[170:17 180:18 190:19 200:0 200:20 200:2 210:21 220:22 230:23 240:24 250:25 260:26 270:27 280:28 280:0]" {
		t.Errorf("window %v, want 170..280 ms", got)
	}
}

// TestPauseTriggerRearm: with Rearm, a second long pause that ends while
// the first is still pending gets its own window (it was lost before).
func TestPauseTriggerRearm(t *testing.T) {
	var saved []string
	p := NewPauseTrigger(hdr, TriggerOptions{Over: 50 * time.Millisecond, Before: 10 * time.Millisecond, After: 100 * time.Millisecond, Rearm: true,
		Create: func(n int, g *gcpause.GC) (io.WriteCloser, string, error) {
			saved = append(saved, fmt.Sprintf("%d:GC%d", n, g.Number))
			return &memFile{}, "f", nil
		}})
	for ms := int64(0); ms <= 600; ms += 10 {
		p.Event(ev(metaTick, ms, 0))
		switch ms {
		case 30:
			gcBegins(p, 1, 30)
		case 110:
			gcBegins(p, 2, 110)
		case 100:
			p.GC(gc(1, 30, 100))
		case 180:
			p.GC(gc(2, 110, 180)) // inside GC 1's After window
		}
	}
	p.Finish()
	if fmt.Sprint(saved) != "[1:GC1 2:GC2]" {
		t.Errorf("saves %v, want both GCs", saved)
	}
}

// TestPauseTriggerWriteError: a failed save is reported and aborts its
// destination (no partial file is committed).
func TestPauseTriggerWriteError(t *testing.T) {
	f := &memFile{}
	p := NewPauseTrigger(hdr, TriggerOptions{Over: time.Millisecond, After: time.Millisecond,
		Create: func(int, *gcpause.GC) (io.WriteCloser, string, error) { return failing{f}, "bad", nil }})
	p.Event(ev(metaTick, 1, 0))
	p.GC(gc(1, 1, 5))
	p.Finish()
	if len(p.Errors()) != 1 || !f.aborted || f.closed {
		t.Errorf("errors %v, aborted %v closed %v", p.Errors(), f.aborted, f.closed)
	}
}

type failing struct{ *memFile }

func (failing) Write([]byte) (int, error) { return 0, errors.New("disk full") }
