package nettrace

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"
)

// Synthetic streams from the Writer exercise the reader's edge cases that
// the real traces hit rarely or never.

var testHeader = Header{
	SyncTimeUTC:             time.Date(2025, 3, 4, 5, 6, 7, 8e6, time.UTC),
	SyncTimeQPC:             1000,
	QPCFrequency:            10_000_000,
	PointerSize:             8,
	ProcessID:               77,
	NumberOfProcessors:      4,
	ExpectedCPUSamplingRate: 1_000_000,
}

var allFormats = []struct {
	name string
	opt  WriterOptions
}{
	{"v4", WriterOptions{}},
	{"v4-uncompressed", WriterOptions{Uncompressed: true}},
	{"v6", WriterOptions{Format: FormatNetTraceV6}},
	{"v6-uncompressed", WriterOptions{Format: FormatNetTraceV6, Uncompressed: true}},
}

var (
	metaSample = &Metadata{Provider: ProviderSampleProfiler, EventID: 0, Level: 4, HasFields: true}
	metaCustom = &Metadata{
		Provider: "My-Source", EventID: 3, EventName: "Work", Keywords: 0xF00, Version: 1, Level: 5, Opcode: 1,
		HasFields: true,
		Fields: []Field{
			{Name: "id", Type: FieldType{Code: TypeInt32}},
			{Name: "name", Type: FieldType{Code: TypeString}},
			{Name: "pt", Type: FieldType{Code: TypeObject, Fields: []Field{{Name: "x", Type: FieldType{Code: TypeDouble}}}}},
		},
	}
	metaArray = &Metadata{
		Provider: "My-Source", EventID: 4, EventName: "Batch", HasFields: true,
		Fields: []Field{{Name: "items", Type: FieldType{Code: TypeArray, Elem: &FieldType{Code: TypeObject, Fields: []Field{
			{Name: "a", Type: FieldType{Code: TypeUInt64}}, {Name: "b", Type: FieldType{Code: TypeGUID}},
		}}}}},
	}
)

func writeAll(t testing.TB, evs []Event, opt WriterOptions) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, testHeader, opt)
	if err != nil {
		t.Fatal(err)
	}
	for i := range evs {
		if err := w.WriteEvent(&evs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestWriterSortAcrossThreads: events of many capture threads, batched per
// thread in small blocks, must come back in exactly the order written.
func TestWriterSortAcrossThreads(t *testing.T) {
	evs := random(4000, 40, 1)
	for _, f := range allFormats {
		t.Run(f.name, func(t *testing.T) {
			opt := f.opt
			opt.BlockSize = 8000 // about 200 events of 40 threads
			if opt.Uncompressed {
				opt.BlockSize = 20000
			}
			opt.SequencePointEvery = 30 << 10
			data := writeAll(t, evs, opt)
			rd, err := NewReader(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			sorted := 0
			for i := 0; ; i++ {
				ev, err := rd.Next()
				if err == io.EOF {
					if i != len(evs) {
						t.Fatalf("%d events back, want %d", i, len(evs))
					}
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if i >= len(evs) {
					t.Fatal("too many events")
				}
				want := snapshot(&evs[i])
				want.seq = ev.SequenceNumber // assigned by the writer
				if got := snapshot(ev); got != want {
					t.Fatalf("event %d:\n got %+v\nwant %+v", i, got, want)
				}
				if ev.IsSorted {
					sorted++
				}
			}
			st := rd.Stats()
			if st.Blocks["EventBlock"] < 15 || st.SequencePoints < 3 || st.CaptureThreads != 40 || st.LostEvents != 0 {
				t.Errorf("stats %+v", st)
			}
			// Every batch starts with one sorted event per thread; the others
			// had to be sorted by the reader.
			if sorted < st.Blocks["EventBlock"] || sorted > len(evs)/2 {
				t.Errorf("%d sorted events in %d blocks", sorted, st.Blocks["EventBlock"])
			}
			h := *rd.Header()
			h.FormatVersion = 0
			if fmt.Sprint(h) != fmt.Sprint(testHeader) {
				t.Errorf("header %+v, want %+v", h, testHeader)
			}
		})
	}
}

// TestWriterStackAfterManyBlocks references a stack defined many stack
// blocks earlier (no sequence point in between).
func TestWriterStackAfterManyBlocks(t *testing.T) {
	first := []uint64{0x1111, 0x2222, 0x3333}
	evs := []Event{{Meta: metaSample, Timestamp: 10, ThreadID: 1, CaptureThreadID: 2, Stack: first}}
	for i := 0; i < 3000; i++ {
		evs = append(evs, Event{Meta: metaSample, Timestamp: int64(11 + i), ThreadID: 1, CaptureThreadID: 2,
			Stack: []uint64{uint64(i) + 0x10000, 0x99}})
	}
	evs = append(evs, Event{Meta: metaSample, Timestamp: 5000, ThreadID: 1, CaptureThreadID: 2, Stack: first})
	for _, f := range allFormats {
		t.Run(f.name, func(t *testing.T) {
			opt := f.opt
			opt.BlockSize = 256
			data := writeAll(t, evs, opt)
			got, rd, err := readEvents(t, bytes.NewReader(data))
			if err != io.EOF {
				t.Fatal(err)
			}
			if len(got) != len(evs) {
				t.Fatalf("%d events back", len(got))
			}
			if last := got[len(got)-1]; last.stack != "1111 2222 3333 " {
				t.Errorf("last event stack %q", last.stack)
			}
			if got[1500].stack != fmt.Sprintf("%x 99 ", 1499+0x10000) {
				t.Errorf("event 1500 stack %q", got[1500].stack)
			}
			st := rd.Stats()
			if st.Blocks["StackBlock"] < 100 || st.Stacks != 3001 || st.EventsWithStack != 3002 || st.SequencePoints != 1 {
				t.Errorf("stats: %d stack blocks, %+v", st.Blocks["StackBlock"], st)
			}
		})
	}
}

// TestWriterLostEvents: sequence gaps inside a thread's events and gaps
// only a sequence point shows give exact LostBefore and LostEvents.
func TestWriterLostEvents(t *testing.T) {
	for _, f := range allFormats {
		t.Run(f.name, func(t *testing.T) {
			var buf bytes.Buffer
			w, err := NewWriter(&buf, testHeader, f.opt)
			if err != nil {
				t.Fatal(err)
			}
			ts := int64(100)
			put := func(capture uint64, seq uint32) {
				ts += 10
				ev := Event{Meta: metaSample, Timestamp: ts, ThreadID: capture, CaptureThreadID: capture, SequenceNumber: seq,
					Payload: []byte{byte(seq)}}
				if err := w.WriteEvent(&ev); err != nil {
					t.Fatal(err)
				}
			}
			put(1, 1)
			put(1, 2)
			put(2, 10) // first event of thread 2: nothing known lost
			put(2, 11)
			w.NoteSequence(1, 4) // events 3 and 4 of thread 1 dropped
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			put(1, 5)
			put(2, 20) // 12..19 dropped
			put(2, 21)
			w.NoteSequence(1, 9) // 6..9 dropped after the last event
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			got, rd, err := readEvents(t, bytes.NewReader(buf.Bytes()))
			if err != io.EOF {
				t.Fatal(err)
			}
			var lost []string
			for _, e := range got {
				lost = append(lost, fmt.Sprintf("%d:%d/%d", e.capture, e.seq, e.lost))
			}
			want := "[1:1/0 1:2/0 2:10/0 2:11/0 1:5/2 2:20/8 2:21/0]"
			if fmt.Sprint(lost) != want {
				t.Errorf("thread:seq/lost = %v, want %s", lost, want)
			}
			if n := rd.Stats().LostEvents; n != 14 {
				t.Errorf("LostEvents = %d, want 14", n)
			}
		})
	}
}

// payloadEnds returns, for each event, the stream offset just past its
// payload (payloads are unique).
func payloadEnds(t *testing.T, data []byte, evs []Event) []int {
	ends := make([]int, len(evs))
	for i := range evs {
		p := bytes.Index(data, evs[i].Payload)
		if p < 0 || bytes.Contains(data[p+1:], evs[i].Payload) {
			t.Fatalf("payload of event %d not found exactly once", i)
		}
		ends[i] = p + len(evs[i].Payload)
	}
	return ends
}

// TestTruncationEveryOffset cuts a small trace at every byte: the reader
// must deliver exactly the events whose bytes precede the cut, then return
// a *TruncatedError.
func TestTruncationEveryOffset(t *testing.T) {
	evs := random(30, 3, 9)
	for _, f := range allFormats {
		t.Run(f.name, func(t *testing.T) {
			opt := f.opt
			opt.BlockSize = 300
			opt.SequencePointEvery = 800
			data := writeAll(t, evs, opt)
			ends := payloadEnds(t, data, evs)
			full := make(map[string]rtEvent)
			for i := range evs {
				full[string(evs[i].Payload)] = snapshot(&evs[i])
			}
			// One buffered reader for all cuts: NewReader uses it as is.
			br := bufio.NewReaderSize(nil, 256<<10)
			for cut := 0; cut < len(data); cut++ {
				want := 0
				for _, e := range ends {
					if e <= cut {
						want++
					}
				}
				br.Reset(bytes.NewReader(data[:cut]))
				got, _, err := readEvents(t, br)
				var te *TruncatedError
				if !errors.As(err, &te) {
					t.Fatalf("cut at %d of %d: error %v, want a TruncatedError", cut, len(data), err)
				}
				if te.Offset > int64(cut) {
					t.Fatalf("cut at %d: truncation reported at %d", cut, te.Offset)
				}
				if len(got) != want {
					t.Fatalf("cut at %d: %d events, want %d", cut, len(got), want)
				}
				for i, g := range got {
					w := full[g.payload]
					w.seq = g.seq
					if g != w || (i > 0 && g.ts < got[i-1].ts) {
						t.Fatalf("cut at %d: event %d is %+v", cut, i, g)
					}
				}
			}
			if got, _, err := readEvents(t, bytes.NewReader(data)); err != io.EOF || len(got) != len(evs) {
				t.Fatalf("whole stream: %d events, %v", len(got), err)
			}
		})
	}
}

// TestWriterMetadata checks metadata encoding choices: V5 tags only when
// needed, one definition for equal metadata, V6-only types refused by V4.
func TestWriterMetadata(t *testing.T) {
	read := func(data []byte) (*Reader, []rtEvent) {
		got, rd, err := readEvents(t, bytes.NewReader(data))
		if err != io.EOF {
			t.Fatal(err)
		}
		return rd, got
	}
	plain := []Event{{Meta: metaSample, Timestamp: 10, CaptureThreadID: 1}}
	rd, _ := read(writeAll(t, plain, WriterOptions{}))
	if rd.FormatVersion() != 4 || rd.Stats().V5Tags {
		t.Errorf("runtime-only metadata: version %d, V5 tags %v", rd.FormatVersion(), rd.Stats().V5Tags)
	}
	same := *metaCustom // equal content, different pointer
	tagged := []Event{
		{Meta: metaCustom, Timestamp: 10, CaptureThreadID: 1},
		{Meta: &same, Timestamp: 11, CaptureThreadID: 1},
		{Meta: metaArray, Timestamp: 12, CaptureThreadID: 1},
	}
	for _, f := range allFormats[:3] {
		rd, got := read(writeAll(t, tagged, f.opt))
		if rd.Stats().Metadata != 2 {
			t.Errorf("%s: %d metadata records, want 2", f.name, rd.Stats().Metadata)
		}
		if f.opt.Format != FormatNetTraceV6 && rd.FormatVersion() != 5 {
			t.Errorf("%s: version %d, want 5 (opcode and array tags)", f.name, rd.FormatVersion())
		}
		if got[0].name != "Work/Start" || got[0].fields != "id:9,name:18,pt:1{x:14,}," ||
			got[2].fields != "items:19<1{a:12,b:17,}>0," || got[1].keywords != 0xF00 || got[1].level != 5 || got[1].version != 1 {
			t.Errorf("%s: metadata back as %+v / %+v", f.name, got[0], got[2])
		}
	}

	// Every V6 type code survives the V6 writer and reader.
	u8 := &FieldType{Code: TypeByte}
	allV6 := &Metadata{Provider: "P", EventID: 2, EventName: "All", Version: 3, HasFields: true, Fields: []Field{
		{Name: "vi", Type: FieldType{Code: TypeVarInt}}, {Name: "vu", Type: FieldType{Code: TypeVarUInt}},
		{Name: "fa", Type: FieldType{Code: TypeFixedLengthArray, Elem: u8, FixedLen: 12}},
		{Name: "c", Type: FieldType{Code: TypeUTF8CodeUnit}}, {Name: "rl", Type: FieldType{Code: TypeRelLoc, Elem: u8}},
		{Name: "dl", Type: FieldType{Code: TypeDataLoc, Elem: u8}}, {Name: "b", Type: FieldType{Code: TypeBoolean8}},
	}}
	_, got := read(writeAll(t, []Event{{Meta: allV6, Timestamp: 5, CaptureThreadID: 1}}, WriterOptions{Format: FormatNetTraceV6}))
	if got[0].fields != "vi:20,vu:21,fa:22<6>12,c:23,rl:24<6>0,dl:25<6>0,b:26," || got[0].version != 3 {
		t.Errorf("V6 types back as %s", got[0].fields)
	}

	v6only := &Metadata{Provider: "P", EventID: 1, HasFields: true, Fields: []Field{{Name: "v", Type: FieldType{Code: TypeVarInt}}}}
	w, err := NewWriter(io.Discard, testHeader, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	err = w.WriteEvent(&Event{Meta: v6only, Timestamp: 1})
	if err == nil || err.Error() != `nettrace writer: P/1 field "v": type code 20 exists only in NetTrace V6` {
		t.Errorf("V6-only type in V4: %v", err)
	}
	if _, err := NewWriter(io.Discard, testHeader, WriterOptions{Format: 5}); err == nil {
		t.Error("format 5 accepted")
	}
}

// v6Stream builds V6 streams block by block for the reader's V6-only
// features.
type v6Stream struct{ b []byte }

func newV6Stream(major uint32) *v6Stream {
	s := &v6Stream{b: append([]byte("Nettrace"), 0, 0, 0, 0)}
	s.b = binary.LittleEndian.AppendUint32(s.b, major)
	s.b = binary.LittleEndian.AppendUint32(s.b, 3) // minor
	c := appendSystemTime(nil, testHeader.SyncTimeUTC)
	c = appendU64(c, 1000)
	c = appendU64(c, 1_000_000_000)
	c = appendU32(c, 8)
	c = appendU32(c, 4)
	for _, kv := range [][2]string{{"ProcessId", "1234"}, {"HardwareThreadCount", "16"}, {"MachineName", "box"}, {"ExpectedCPUSamplingRate", "nope"}} {
		c = appendUTF8(appendUTF8(c, kv[0]), kv[1])
	}
	return s.block(v6Trace, c)
}

func (s *v6Stream) block(kind byte, c []byte) *v6Stream {
	s.b = binary.LittleEndian.AppendUint32(s.b, uint32(len(c))|uint32(kind)<<24)
	s.b = append(s.b, c...)
	return s
}

func uv(b []byte, v uint64) []byte { return binary.AppendUvarint(b, v) }

// TestV6Features reads a hand-built V6 stream: all type codes and optional
// metadata, thread rows with and without OS ids, label lists with activity
// ids and overrides, remove-thread and sequence-point loss checks, metadata
// flushed by a sequence point, an unknown block kind.
func TestV6Features(t *testing.T) {
	got, rd, err := readEvents(t, bytes.NewReader(v6FeatureStream()))
	if err != io.EOF {
		t.Fatalf("%v after %d events", err, len(got))
	}
	h := rd.Header()
	if h.FormatVersion != 6 || h.MinorVersion != 3 || h.ProcessID != 1234 || h.NumberOfProcessors != 16 ||
		h.ExpectedCPUSamplingRate != 0 || fmt.Sprint(h.KeyValues) != "map[ExpectedCPUSamplingRate:nope MachineName:box]" ||
		!h.SyncTimeUTC.Equal(testHeader.SyncTimeUTC) || h.QPCFrequency != 1e9 || h.SyncTimeQPC != 1000 {
		t.Errorf("header %+v", h)
	}
	var lines []string
	for _, e := range got {
		lines = append(lines, fmt.Sprintf("%s/%s op%d kw%x lv%d v%d t%d c%d p%d s%d lost%d act%x rel%x %q [%s]",
			e.provider, e.name, e.opcode, e.keywords, e.level, e.version, e.thread, e.capture, e.proc, e.seq, e.lost,
			e.act[:3], e.rel[9:10], e.payload, e.stack))
	}
	want := []string{
		`Prov/Ev/Stop op2 kwabc lv3 v4 t4001 c4001 p2 s1 lost0 act010203 rel09 "ab" [dead ]`,
		`Prov/Ev/Stop op2 kwabc lv3 v4 t4001 c4001 p2 s2 lost0 act010203 rel09 "cd" [dead ]`,
		`Prov/Ev/Stop op2 kwabc lv3 v4 t4002 c4001 p1 s4 lost1 act000000 rel00 "ef" [dead ]`,
		`Prov/Bare/Send op9 kw5 lv1 v6 t3 c4002 p0 s1 lost0 act000000 rel00 "gh" []`,
	}
	if fmt.Sprint(lines) != fmt.Sprint(want) {
		t.Errorf("events:\n%s\nwant:\n%s", joinLines(lines), joinLines(want))
	}
	if got[0].fields != "vi:20,vu:21,c8:23,b8:26,fa:22<9>3,rl:24<6>0,dl:25<8>0,ar:19<1{x:26,}>0," {
		t.Errorf("fields %s", got[0].fields)
	}
	st := rd.Stats()
	if st.LostEvents != 5 || st.UnknownMetadataRefs != 1 || st.Events != 4 || st.Metadata != 2 || st.Blocks["Block66"] != 1 ||
		st.Blocks["LabelListBlock"] != 1 || st.Blocks["RemoveThreadBlock"] != 1 || st.SequencePoints != 1 || st.CaptureThreads != 2 {
		t.Errorf("stats %+v", st)
	}
}

func joinLines(l []string) string {
	var b bytes.Buffer
	for _, s := range l {
		b.WriteString("  " + s + "\n")
	}
	return b.String()
}

// TestV6Versions: a newer major version is refused with a clear message,
// an older one with a V6-style header is corrupt.
func TestV6Versions(t *testing.T) {
	_, err := NewReader(bytes.NewReader(newV6Stream(7).b))
	var uv *UnsupportedVersionError
	if !errors.As(err, &uv) || err.Error() != "unsupported trace format NetTrace V7.3 (major versions above 6 are not readable): clrspy reads NetPerf V3 and NetTrace V4, V5 and V6" {
		t.Errorf("major 7: %v", err)
	}
	_, err = NewReader(bytes.NewReader(newV6Stream(5).b))
	var fe *FormatError
	if !errors.As(err, &fe) {
		t.Errorf("major 5: %v", err)
	}
	s := newV6Stream(6)
	s.b = s.b[:20]
	s.block(v6Event, appendU64(appendU64(appendU16(appendU16(nil, 20), 1), 0), 0))
	if _, err := NewReader(bytes.NewReader(s.b)); err == nil || err.Error() != "corrupt trace at offset 20: expected the Trace block first, found EventBlock" {
		t.Errorf("no trace block: %v", err)
	}
}

// TestV6UnknownBlocksSkipped inserts blocks of unknown kinds between every
// block of a writer-made V6 stream; the events read back must not change.
func TestV6UnknownBlocksSkipped(t *testing.T) {
	evs := random(500, 5, 3)
	data := writeAll(t, evs, WriterOptions{Format: FormatNetTraceV6, BlockSize: 1000, SequencePointEvery: 5000})
	want, _, err := readEvents(t, bytes.NewReader(data))
	if err != io.EOF {
		t.Fatal(err)
	}
	out := append([]byte(nil), data[:20]...)
	n := 0
	for p := 20; p < len(data); {
		h := binary.LittleEndian.Uint32(data[p:])
		end := p + 4 + int(h&0xFFFFFF)
		out = append(out, data[p:end]...)
		if h>>24 != v6EndOfStream {
			junk := bytes.Repeat([]byte{byte(n)}, n%7)
			out = binary.LittleEndian.AppendUint32(out, uint32(len(junk))|uint32(9+n%200)<<24)
			out = append(out, junk...)
			n++
		}
		p = end
	}
	got, rd, err := readEvents(t, bytes.NewReader(out))
	if err != io.EOF {
		t.Fatal(err)
	}
	compareEvents(t, want, got)
	unknown := 0
	for k, v := range rd.Stats().Blocks {
		if len(k) > 5 && k[:5] == "Block" {
			unknown += v
		}
	}
	if unknown != n || n < 20 {
		t.Errorf("%d unknown blocks counted, %d inserted", unknown, n)
	}
}

// v6FeatureStream builds the stream TestV6Features reads.
func v6FeatureStream() []byte {
	s := newV6Stream(6)

	// Metadata 1: every V6 type code, optional metadata of every kind.
	row := uv(nil, 1)
	row = appendUTF8(row, "Prov")
	row = uv(row, 7)
	row = appendUTF8(row, "Ev")
	fields := [][]byte{
		append(appendUTF8(nil, "vi"), 20),
		append(appendUTF8(nil, "vu"), 21),
		append(appendUTF8(nil, "c8"), 23),
		append(appendUTF8(nil, "b8"), 26),
		append(appendUTF8(nil, "fa"), 22, 9, 3, 0),
		append(appendUTF8(nil, "rl"), 24, 6),
		append(appendUTF8(nil, "dl"), 25, 8),
		append(append(appendUTF8(nil, "ar"), 19, 1), append(appendU16(nil, 1), append(appendU16(nil, 3), append(appendUTF8(nil, "x"), 26)...)...)...),
	}
	row = appendU16(row, uint16(len(fields)))
	for _, f := range fields {
		row = appendU16(row, uint16(len(f)+1))
		row = append(row, f...)
		row = append(row, 0xEE) // undefined trailing byte the reader must skip
	}
	var opt []byte
	opt = append(opt, 1, 2)                // opcode
	opt = appendU64(append(opt, 3), 0xABC) // keywords
	opt = appendUTF8(append(opt, 4), "tmpl {0}")
	opt = appendUTF8(append(opt, 5), "desc")
	opt = appendUTF8(appendUTF8(append(opt, 6), "k"), "v")
	opt = append(append(opt, 7), make([]byte, 16)...)
	opt = append(opt, 8, 3, 9, 4) // level 3, version 4
	row = appendU16(row, uint16(len(opt)))
	row = append(row, opt...)
	// Metadata 2: no optional metadata at all (it is optional).
	row2 := appendUTF8(uv(appendUTF8(uv(nil, 2), "Prov"), 8), "Bare")
	row2 = appendU16(row2, 0)
	md := appendU16(nil, 2)
	md = append(md, 0xAA, 0xBB) // header bytes to skip
	md = append(appendU16(md, uint16(len(row))), row...)
	md = append(appendU16(md, uint16(len(row2))), row2...)
	s.block(v6Metadata, md)

	// Threads: index 1 -> tid 4001 (with name, pid, key/value), 2 -> 4002,
	// 3 without an OS thread id.
	th := func(b []byte, r []byte) []byte { return append(appendU16(b, uint16(len(r))), r...) }
	var tb []byte
	tb = th(tb, append(appendUTF8(append(uv(nil, 1), 1), "main"), append(uv([]byte{2}, 1234), append(uv([]byte{3}, 4001), appendUTF8(appendUTF8([]byte{4}, "k"), "v")...)...)...))
	tb = th(tb, append(uv(nil, 2), uv([]byte{3}, 4002)...))
	tb = th(tb, uv(nil, 3))
	s.block(v6Thread, tb)
	s.block(0x42, []byte("unknown kind, skipped"))

	// Label lists 1 (activity + related) and 2 (overrides + other kinds).
	act, rel := GUID{1, 2, 3}, GUID{9: 9}
	ll := appendU32(appendU32(nil, 1), 2)
	ll = append(append(append(append(ll, 1), act[:]...), 0x82), rel[:]...)
	ll = append(append(ll, 3), make([]byte, 16)...) // trace id
	ll = appendU64(append(ll, 4), 77)               // span id
	ll = appendUTF8(appendUTF8(append(ll, 5), "sk"), "sv")
	ll = uv(appendUTF8(append(ll, 6), "ik"), 5)
	ll = append(ll, 7, 9)
	ll = appendU64(append(ll, 8), 0x5)
	ll = append(ll, 9, 1, 0x80|10, 6)
	s.block(v6LabelList, ll)

	// Stack 1.
	s.block(v6Stack, appendU64(appendU32(appendU32(appendU32(nil, 1), 1), 8), 0xDEAD))

	// Events (compressed): capture index 1, seqs 1, 2, 4 (one lost);
	// thread index 3 (no OS id) on capture 2 with label 2.
	ev := appendU16(nil, 20)
	ev = appendU16(ev, 1)
	ev = appendU64(appendU64(ev, 0), 0)
	// e1: meta 1, seq 1 (delta 0), capture 1, proc 2, thread 1, stack 1, ts 2000, label 1, sorted, size 2
	ev = append(ev, 0x01|0x02|0x04|0x08|0x10|0x40|0x80)
	ev = uv(uv(uv(uv(uv(uv(uv(uv(ev, 1), 0), 1), 2), 1), 1), 2000), 1)
	ev = uv(ev, 2)
	ev = append(ev, 'a', 'b')
	// e2: same header, seq 2 implicit, ts +5, no flags but size
	ev = append(ev, 0)
	ev = uv(ev, 5)
	ev = append(ev, 'c', 'd')
	// e3: seq 4 (delta 1), label 0, thread index 2
	ev = append(ev, 0x02|0x04|0x10)
	ev = uv(uv(uv(ev, 1), 1), 1)
	ev = uv(ev, 2)
	ev = uv(ev, 5)
	ev = uv(ev, 0)
	ev = append(ev, 'e', 'f')
	// e4: meta 2, capture 2 with seq 1, thread 3, label 2
	ev = append(ev, 0x01|0x02|0x04|0x08|0x10|0x40)
	ev = uv(ev, 2)
	ev = uv(ev, 0xFFFFFFFC) // 4 + 0xFFFFFFFC + 1 wraps to 1
	ev = uv(uv(ev, 2), 0)
	ev = uv(ev, 3)
	ev = uv(ev, 0)
	ev = uv(ev, 100)
	ev = uv(ev, 2)
	ev = append(ev, 'g', 'h')
	s.block(v6Event, ev)

	// Capture 1 removed at seq 6 (two more lost); sequence point says
	// capture 2 reached 3 (two lost) and flushes metadata and threads.
	s.block(v6RemoveThread, uv(uv(nil, 1), 6))
	sp := appendU32(appendU32(appendU64(nil, 3000), 3), 1)
	sp = uv(uv(sp, 2), 3)
	s.block(v6SequencePoint, sp)
	// An event referencing flushed metadata 1: counted, not delivered.
	ev2 := appendU64(appendU64(appendU16(appendU16(nil, 20), 1), 0), 0)
	ev2 = append(ev2, 0x01|0x02|0x40|0x80)
	ev2 = uv(uv(uv(uv(uv(uv(ev2, 1), 3), 2), 0), 4000), 0) // seq 4 follows the SP's 3
	s.block(v6Event, ev2)
	s.block(v6EndOfStream, nil)

	return s.b
}

// TestWriterEmpty: a trace without events is still a complete stream, and
// a closed writer refuses more events.
func TestWriterEmpty(t *testing.T) {
	for _, f := range allFormats {
		var buf bytes.Buffer
		w, err := NewWriter(&buf, testHeader, f.opt)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		got, rd, err := readEvents(t, bytes.NewReader(buf.Bytes()))
		if err != io.EOF || len(got) != 0 || rd.Header().ProcessID != 77 {
			t.Errorf("%s: %d events, %v", f.name, len(got), err)
		}
		if err := w.WriteEvent(&Event{Meta: metaSample}); err == nil {
			t.Errorf("%s: write after Close accepted", f.name)
		}
	}
}

// TestQueueCap: a stream whose writer flags no event as sorted and writes
// no sequence point until its end would make the reader hold every event.
// The sort queue's cap bounds that: the reader drains early (events may
// then leave timestamp order, never their thread's order), counts each
// drain, and still delivers every event exactly once.
func TestQueueCap(t *testing.T) {
	old := maxChunks
	maxChunks = 8 // 1,024 events
	defer func() { maxChunks = old }()
	const n, threads = 20000, 5
	evs := random(n, threads, 7)
	for _, opt := range []WriterOptions{
		{Unsorted: true, SequencePointEvery: 1 << 40, BlockSize: 4096},
		{Unsorted: true, SequencePointEvery: 1 << 40, BlockSize: 4096, Format: FormatNetTraceV6},
	} {
		data := writeAll(t, evs, opt)
		r, err := NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		seen := make(map[string]bool, n)
		last := make(map[uint64]int64) // per capture thread
		for {
			ev, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			key := string(ev.Payload[:8])
			if seen[key] {
				t.Fatalf("format %d: %s delivered twice", opt.Format, key)
			}
			seen[key] = true
			if ev.Timestamp < last[ev.CaptureThreadID] {
				t.Fatalf("format %d: thread %d went back in time at %s", opt.Format, ev.CaptureThreadID, key)
			}
			last[ev.CaptureThreadID] = ev.Timestamp
		}
		st := r.Stats()
		if len(seen) != n || st.Events != n {
			t.Errorf("format %d: %d distinct events, %d counted, want %d", opt.Format, len(seen), st.Events, n)
		}
		// Without the cap all 20,000 events would wait for the end: about
		// 160 chunks. With it the reader drains once the queues hold more
		// than 8 chunks; a block (4 KB, under 100 events) can add one
		// chunk per thread before the check.
		if held := st.PeakQueueBytes / chunkBytes; st.ForcedFlushes < 10 || held > 8+threads || held < 8 {
			t.Errorf("format %d: %d forced drains, at most %d chunks held; want at least 10 drains and 8 to %d chunks",
				opt.Format, st.ForcedFlushes, held, 8+threads)
		}
	}
}
