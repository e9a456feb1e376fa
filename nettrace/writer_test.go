package nettrace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/internal/tracetest"
)

// rtEvent is a deep copy of everything a Reader delivers for one event.
type rtEvent struct {
	provider, name, eventName string
	id, version               uint32
	opcode, level             uint8
	keywords                  uint64
	fields                    string
	ts                        int64
	thread, capture           uint64
	proc, seq, lost           uint32
	act, rel                  GUID
	payload                   string
	stack                     string
}

func snapshot(ev *Event) rtEvent {
	m := ev.Meta
	var st strings.Builder
	for _, ip := range ev.Stack {
		fmt.Fprintf(&st, "%x ", ip)
	}
	name := m.Name
	if name == "" {
		name = displayName(m) // metadata made by a test, not a Reader
	}
	return rtEvent{
		provider: m.Provider, name: name, eventName: m.EventName, id: m.EventID, version: m.Version,
		opcode: m.Opcode, level: m.Level, keywords: m.Keywords, fields: fieldsString(m.Fields),
		ts: ev.Timestamp, thread: ev.ThreadID, capture: ev.CaptureThreadID, proc: ev.ProcessorNumber,
		seq: ev.SequenceNumber, lost: ev.LostBefore, act: ev.ActivityID, rel: ev.RelatedActivityID,
		payload: string(ev.Payload), stack: st.String(),
	}
}

// readEvents reads a whole stream; the error is the one that ended it.
func readEvents(t testing.TB, r io.Reader) ([]rtEvent, *Reader, error) {
	t.Helper()
	rd, err := NewReader(r)
	if err != nil {
		return nil, nil, err
	}
	var out []rtEvent
	for {
		ev, err := rd.Next()
		if err != nil {
			return out, rd, err
		}
		out = append(out, snapshot(ev))
	}
}

// copyTrace reads src and writes every event it delivers to one Writer
// per option set.
func copyTrace(t testing.TB, src io.Reader, opts ...WriterOptions) ([]rtEvent, *Reader, [][]byte) {
	t.Helper()
	rd, err := NewReader(src)
	if err != nil {
		t.Fatal(err)
	}
	bufs := make([]*bytes.Buffer, len(opts))
	ws := make([]*Writer, len(opts))
	for i, opt := range opts {
		bufs[i] = new(bytes.Buffer)
		if ws[i], err = NewWriter(bufs[i], *rd.Header(), opt); err != nil {
			t.Fatal(err)
		}
	}
	var out []rtEvent
	for {
		ev, err := rd.Next()
		if err != nil {
			if err != io.EOF && !errors.Is(err, ErrTruncated) {
				t.Fatal(err)
			}
			break
		}
		out = append(out, snapshot(ev))
		for _, w := range ws {
			if err := w.WriteEvent(ev); err != nil {
				t.Fatal(err)
			}
		}
	}
	outs := make([][]byte, len(opts))
	for i, w := range ws {
		// Events the source lost after each thread's last event show only
		// in its final sequence point; carry them over.
		if rd.hdr.FormatVersion == FormatNetTraceV4 {
			for id, q := range rd.threads {
				if q.seqInit {
					w.NoteSequence(id, q.lastSeq)
				}
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		outs[i] = bufs[i].Bytes()
	}
	return out, rd, outs
}

func fieldsString(fs []Field) string {
	var b strings.Builder
	var typ func(t *FieldType)
	typ = func(t *FieldType) {
		fmt.Fprintf(&b, "%d", t.Code)
		if t.Elem != nil {
			b.WriteString("<")
			typ(t.Elem)
			fmt.Fprintf(&b, ">%d", t.FixedLen)
		}
		if t.Code == TypeObject {
			b.WriteString("{" + fieldsString(t.Fields) + "}")
		}
	}
	for _, f := range fs {
		b.WriteString(f.Name + ":")
		typ(&f.Type)
		b.WriteString(",")
	}
	return b.String()
}

// canonical orders events with equal timestamps by capture thread and
// sequence: which of two simultaneous events on different threads comes
// first is not fixed by the format.
func canonical(evs []rtEvent) []rtEvent {
	out := slices.Clone(evs)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := &out[i], &out[j]
		if a.ts != b.ts {
			return a.ts < b.ts
		}
		return a.capture < b.capture
	})
	return out
}

// TestRoundTripFixtures reads every fixture trace, writes it with the
// Writer (V4 compressed, V4 uncompressed, V6) and reads it back: the same
// events with the same metadata, timestamps, threads, sequence numbers,
// payloads, stacks and activity ids, and the same counts. (The cut fixture
// gives the events before its cut, and a copy that ends cleanly.)
func TestRoundTripFixtures(t *testing.T) {
	var files []string
	for _, name := range tracetest.Fixtures(t) {
		files = append(files, tracetest.Path(t, name))
	}
	roundTrip(t, files)
}

func roundTrip(t *testing.T, files []string) {
	formats := []struct {
		name string
		opt  WriterOptions
	}{
		{"v4", WriterOptions{}},
		{"v6", WriterOptions{Format: FormatNetTraceV6}},
		{"v4-uncompressed", WriterOptions{Uncompressed: true, BlockSize: 20 << 10}},
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var opts []WriterOptions
		for _, form := range formats {
			opts = append(opts, form.opt)
		}
		if len(data) > 2<<20 {
			opts = opts[:2] // the small traces cover the uncompressed path
		}
		orig, rd, outs := copyTrace(t, bytes.NewReader(data), opts...)
		want := canonical(orig)
		v3 := rd.Header().FormatVersion == FormatNetPerfV3
		for i, out := range outs {
			t.Run(filepath.Base(f)+"/"+formats[i].name, func(t *testing.T) {
				back, rd2, err := readEvents(t, bytes.NewReader(out))
				if err != io.EOF {
					t.Fatalf("reading the copy: %v", err)
				}
				if v3 {
					// NetPerf has no sequence numbers: the writer numbers
					// events per thread.
					for i := range back {
						back[i].seq = 0
					}
				}
				compareEvents(t, want, canonical(back))
				compareStats(t, rd.Stats(), rd2.Stats(), v3)
				h1, h2 := *rd.Header(), *rd2.Header()
				h1.FormatVersion, h2.FormatVersion = 0, 0
				if fmt.Sprint(h1) != fmt.Sprint(h2) {
					t.Errorf("header\n got %+v\nwant %+v", h2, h1)
				}
				if got, wantV := rd2.Header().FormatVersion, max(opts[i].Format, FormatNetTraceV4); got != wantV {
					t.Errorf("format version %d, want %d", got, wantV)
				}
			})
		}
	}
}

func compareEvents(t *testing.T, want, got []rtEvent) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%d events back, want %d", len(got), len(want))
	}
	bad := 0
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			bad++
			if bad <= 3 {
				t.Errorf("event %d differs:\n got %+v\nwant %+v", i, got[i], want[i])
			}
		}
	}
	if bad > 3 {
		t.Errorf("%d events differ in all", bad)
	}
}

func compareStats(t *testing.T, want, got *Stats, v3 bool) {
	t.Helper()
	type counts struct {
		Events, EventsWithStack, LostEvents uint64
		Metadata, MaxStackDepth, Threads    int
	}
	c := func(s *Stats) counts {
		return counts{s.Events, s.EventsWithStack, s.LostEvents, s.Metadata, s.MaxStackDepth, s.CaptureThreads}
	}
	w, g := c(want), c(got)
	if v3 {
		w.Threads, g.Threads = 0, 0
	}
	if w != g {
		t.Errorf("stats\n got %+v\nwant %+v", g, w)
	}
	if got.UnknownMetadataRefs != 0 || got.Truncated {
		t.Errorf("copy has %d unknown metadata refs, truncated %v", got.UnknownMetadataRefs, got.Truncated)
	}
}
