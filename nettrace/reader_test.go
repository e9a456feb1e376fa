package nettrace

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"
	"time"

	"github.com/clrspy/clrspy/internal/tracetest"
)

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

// resetStream is one stream of a Reset sequence: stop events are read
// before the next Reset (0 reads all); total, if not 0, is what a full read
// delivers.
type resetStream struct {
	name        string
	data        []byte
	stop, total int
}

// TestReset: one Reader, Reset between streams of every container the
// fixtures give (V4 compressed as the runtime writes it, V4 uncompressed
// and V6 copies, a real cut trace and a copy cut in half) and abandoned half
// way through some of them, delivers exactly what a fresh Reader delivers
// on each: the queues, chunks and block buffers it keeps carry nothing over.
// The compatibility suite adds NetPerf V3 (TestResetCompat).
func TestReset(t *testing.T) {
	data, err := os.ReadFile(tracetest.Path(t, "contention.nettrace"))
	if err != nil {
		t.Fatal(err)
	}
	cut, err := os.ReadFile(tracetest.Path(t, "gc-wks.truncated.nettrace"))
	if err != nil {
		t.Fatal(err)
	}
	_, _, copies := copyTrace(t, bytes.NewReader(data),
		WriterOptions{Format: FormatNetTraceV6}, WriterOptions{Uncompressed: true})
	checkReset(t, []resetStream{
		{"contention", data, 0, 3514},
		{"v6 copy", copies[0], 2000, 3514},
		{"gc-wks cut", cut, 0, 464},
		{"uncompressed copy", copies[1], 0, 3514},
		{"contention cut in half", data[:len(data)/2], 0, 0},
		{"contention again", data, 1500, 3514},
		{"contention once more", data, 0, 3514},
	})
}

func checkReset(t *testing.T, streams []resetStream) {
	t.Helper()
	var err error
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
