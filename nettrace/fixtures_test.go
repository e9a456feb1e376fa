package nettrace

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/internal/tracetest"
)

// The fixtures are traces clrspy recorded from the project's workload
// (testdata/traces/README.md): .NET 10 on Linux x64, NetTrace V4 as the
// runtime writes it.

// workloadOf is the workload report a fixture was recorded with (the cut
// copy shares its original's).
func workloadOf(name string) string {
	return strings.Replace(name, ".truncated", "", 1)
}

// TestFixtures reads every fixture: the header is the recording's (the
// process id the workload reported about itself, 8-byte pointers, a
// nanosecond clock, the sampler's 1 ms period), events come in timestamp
// order, nothing is lost, every complete recording ends cleanly and the cut
// copy with a TruncatedError. The per-event counts and reader statistics are
// in testdata/fixtures.txt.
func TestFixtures(t *testing.T) {
	var golden bytes.Buffer
	for _, name := range tracetest.Fixtures(t) {
		r, sum, end := readAll(t, tracetest.Path(t, name))
		h, st := r.Header(), r.Stats()
		w := tracetest.Workload(t, workloadOf(name))
		if h.FormatVersion != FormatNetTraceV4 || h.PointerSize != 8 || h.QPCFrequency != 1_000_000_000 ||
			h.ProcessID != w.Pid || h.ExpectedCPUSamplingRate != 1_000_000 || h.NumberOfProcessors < 1 {
			t.Errorf("%s: header %+v, workload pid %d", name, *h, w.Pid)
		}
		var te *TruncatedError
		if strings.Contains(name, ".truncated.") {
			if !errors.As(end, &te) || te.What != "EventBlock" || !st.Truncated || st.TruncatedAt != te.Offset {
				t.Errorf("%s: end %v, stats truncated %v at %d", name, end, st.Truncated, st.TruncatedAt)
			}
		} else if end != nil || st.Truncated {
			t.Errorf("%s: end %v", name, end)
		}
		if st.LostEvents != 0 || st.UnknownMetadataRefs != 0 || st.ForcedFlushes != 0 {
			t.Errorf("%s: stats %+v", name, st)
		}
		var total, withStack uint64
		for _, c := range sum.Counts() {
			total += c.Count
			withStack += c.WithStack
		}
		if total != st.Events || withStack != st.EventsWithStack {
			t.Errorf("%s: summary counts %d (%d with stack), stats %d (%d)", name, total, withStack, st.Events, st.EventsWithStack)
		}
		fmt.Fprintf(&golden, "== %s: %d events (%d with a stack), %d metadata, %d stacks (max depth %d), %d sequence points, %d capture threads",
			name, st.Events, st.EventsWithStack, st.Metadata, st.Stacks, st.MaxStackDepth, st.SequencePoints, st.CaptureThreads)
		if te != nil {
			fmt.Fprintf(&golden, "; cut at %d inside %s, cut in half: %s", te.Offset, te.What, st.CutEvent)
		}
		golden.WriteString("\n")
		for _, c := range sum.Counts() {
			fmt.Fprintf(&golden, "%7d %7d  %s/%s v%d (id %d)\n", c.Count, c.WithStack, c.Provider, c.Name, c.Version, c.ID)
		}
	}
	tracetest.Golden(t, "fixtures.txt", golden.Bytes())
}

// TestTruncatedIsPrefix: the cut copy delivers, for every capture thread, a
// prefix of the events the whole recording delivers on that thread, each
// identical (payload, stack, timestamp, sequence number): a cut loses the
// end of the stream and nothing before it.
func TestTruncatedIsPrefix(t *testing.T) {
	read := func(name string) map[uint64][]rtEvent {
		data, err := os.ReadFile(tracetest.Path(t, name))
		if err != nil {
			t.Fatal(err)
		}
		evs, _, _ := readEvents(t, bytes.NewReader(data))
		out := map[uint64][]rtEvent{}
		for _, e := range evs {
			out[e.capture] = append(out[e.capture], e)
		}
		return out
	}
	full, cut := read("gc-wks.nettrace"), read("gc-wks.truncated.nettrace")
	n := 0
	for th, evs := range cut {
		all := full[th]
		if len(evs) > len(all) {
			t.Fatalf("thread %d: %d events in the cut copy, %d in the whole", th, len(evs), len(all))
		}
		for i := range evs {
			if evs[i] != all[i] {
				t.Fatalf("thread %d event %d differs:\n cut %+v\nfull %+v", th, i, evs[i], all[i])
			}
		}
		n += len(evs)
	}
	if n != 464 || len(cut) != 3 {
		t.Errorf("%d events on %d threads in the cut copy, want 464 on 3", n, len(cut))
	}
}

// TestDumpGolden pins the canonical text form on the cut fixture (every
// event the reader delivers, and how the stream ended).
func TestDumpGolden(t *testing.T) {
	r := tracetest.Open(t, "gc-wks.truncated.nettrace", NewReader)
	var b bytes.Buffer
	err := Dump(&b, r)
	var te *TruncatedError
	if !errors.As(err, &te) || te.Offset != 25648 {
		t.Errorf("Dump returned %v, want the truncation at 25648", err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 464+2 || !strings.HasPrefix(lines[0], "# nettrace V4 pointer=8 pid=22587 ") ||
		lines[len(lines)-1] != "# end: 464 events, 0 lost; truncated at offset 25648 (inside EventBlock); "+
			"cut in half: Microsoft-Windows-DotNETRuntime/GC/DynamicEvent (48 of 78 payload bytes present)" {
		t.Errorf("%d lines, first %q, last %q", len(lines), lines[0], lines[len(lines)-1])
	}
	tracetest.Golden(t, "dump/gc-wks.truncated.txt", b.Bytes())
}

// TestDumpContainerIndependent: a trace and its V6 and uncompressed V4
// copies dump the same events (only the header line names the container).
func TestDumpContainerIndependent(t *testing.T) {
	data, err := os.ReadFile(tracetest.Path(t, "contention.nettrace"))
	if err != nil {
		t.Fatal(err)
	}
	_, _, copies := copyTrace(t, bytes.NewReader(data), WriterOptions{Format: FormatNetTraceV6}, WriterOptions{Uncompressed: true})
	dump := func(b []byte) string {
		r, err := NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		if err := Dump(&out, r); err != nil {
			t.Fatal(err)
		}
		s := out.String()
		return s[strings.IndexByte(s, '\n')+1:]
	}
	want := dump(data)
	if n := strings.Count(want, "\n"); n != 3514+1 {
		t.Errorf("%d lines, want 3514 events and the end line", n)
	}
	for i, c := range copies {
		if got := dump(c); got != want {
			t.Errorf("copy %d dumps differently:\n%s", i, tracetest.Diff("original", "copy", want, got))
		}
	}
}

// TestDumpPayloads: self-describing fields by name, undecodable payloads in
// hex with their size, Describe's text where it knows the event.
func TestDumpPayloads(t *testing.T) {
	h := &Header{QPCFrequency: 1_000_000_000, SyncTimeQPC: 1000, PointerSize: 8}
	fields := &Metadata{Provider: "P", Name: "E", Version: 2, HasFields: true, Fields: []Field{
		{Name: "N", Type: FieldType{Code: TypeInt32}}, {Name: "S", Type: FieldType{Code: TypeString}},
	}}
	raw := &Metadata{Provider: "Microsoft-Windows-DotNETRuntime", Name: "GC/Start", Version: 2, HasFields: true, Runtime: Runtime, EventID: 1}
	payload := []byte{7, 0, 0, 0, 'h', 0, 'i', 0, '"', 0, 0, 0}
	ev := &Event{Meta: fields, Timestamp: 1500, ThreadID: 42, Payload: payload, Stack: []uint64{1, 2}, LostBefore: 3}
	if got := string(Dumper{}.AppendEvent(nil, h, ev)); got != `500 tid=42 P/E v2 stack=2 lost=3 N=7 S="hi\""` {
		t.Errorf("self-describing: %s", got)
	}
	long := make([]byte, 40)
	for i := range long {
		long[i] = byte(i)
	}
	ev = &Event{Meta: raw, Timestamp: 1000, ThreadID: 1, Payload: long}
	want := "0 tid=1 Microsoft-Windows-DotNETRuntime/GC/Start v2 payload=40B " +
		"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f..."
	if got := string(Dumper{}.AppendEvent(nil, h, ev)); got != want {
		t.Errorf("hex:\n got %s\nwant %s", got, want)
	}
	if got := string(Dumper{HexBytes: 2}.AppendEvent(nil, h, &Event{Meta: raw, Payload: long[:2]})); !strings.HasSuffix(got, " payload=2B 0001") {
		t.Errorf("short hex: %s", got)
	}
	d := Dumper{Describe: func(ev *Event, ptr int) (string, bool) {
		return fmt.Sprintf("{len %d ptr %d}", len(ev.Payload), ptr), true
	}}
	if got := string(d.AppendEvent(nil, h, ev)); !strings.HasSuffix(got, " v2 {len 40 ptr 8}") {
		t.Errorf("described: %s", got)
	}
	// A payload too short for its fields is shown in hex, with the error.
	ev = &Event{Meta: fields, Timestamp: 1000, Payload: []byte{1, 2}}
	if got := string(Dumper{}.AppendEvent(nil, h, ev)); !strings.Contains(got, ` undecoded="`) || !strings.HasSuffix(got, " payload=2B 0102") {
		t.Errorf("undecodable: %s", got)
	}
}
