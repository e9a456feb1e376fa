// Command hostile writes the crafted trace files of the hostile-input table
// in docs/PERFORMANCE.md (scripts/hostile.sh runs clrspy on each and
// measures it): empty, random and cut-short files, impossible and real
// huge blocks, deep metadata nesting, bad varints, unknown versions, and
// valid traces built to stress memory (3 M distinct stacks without a
// sequence point, 600 k threads). The same run writes the same bytes.
//
//	go run ./internal/hostile -dir DIR
//
// It prints one line per file: name, the clrspy commands to run on it
// (comma-separated), and what the file is.
package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/clrspy/clrspy/internal/tracegen"
	"github.com/clrspy/clrspy/nettrace"
)

var dir = flag.String("dir", "", "directory to write the files to")

type file struct {
	name, cmds, what string
	data             func() ([]byte, error) // small files
	stream           func(w *bufio.Writer) error
}

func main() {
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "hostile: give -dir DIR")
		os.Exit(2)
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "hostile:", err)
		os.Exit(1)
	}
	base, err := generated(4 << 20)
	if err != nil {
		fail(err)
	}
	small, err := generated(64 << 10)
	if err != nil {
		fail(err)
	}
	v6, err := rewrite(base, nettrace.WriterOptions{Format: nettrace.FormatNetTraceV6})
	if err != nil {
		fail(err)
	}
	const all = "stat,gc,profile,heap,locks"
	files := []file{
		{"valid-4MiB.nettrace", all, "baseline: a valid generated trace (GCs, samples, allocations, contention on 64 threads)", constant(base), nil},
		{"empty.nettrace", "stat", "zero-length file", constant(nil), nil},
		{"random-1MiB.bin", "stat", "1 MiB of random bytes", func() ([]byte, error) { return random(1 << 20), nil }, nil},
		{"random-after-header.nettrace", "stat", "a valid stream header then 1 MiB of random bytes", func() ([]byte, error) {
			return append(append([]byte(nil), base[:headerLen(base)]...), random(1<<20)...), nil
		}, nil},
		{"magic-only.nettrace", "stat", `"Nettrace" and nothing else`, constant([]byte("Nettrace")), nil},
		{"cut-in-header.nettrace", "stat", "valid trace cut at byte 20 (inside the serialization signature)", constant(base[:20]), nil},
		{"cut-in-trace-object.nettrace", "stat", "valid trace cut at byte 60 (inside the Trace object)", constant(base[:60]), nil},
		{"cut-half.nettrace", "stat,gc,profile", "valid trace cut at half its length (inside a block)", constant(base[:len(base)/2]), nil},
		{"cut-no-end.nettrace", "stat", "valid trace without its last byte (the end-of-stream tag)", constant(base[:len(base)-1]), nil},
		{"v6-cut-half.nettrace", "stat", "valid V6 trace cut at half its length", constant(v6[:len(v6)/2]), nil},
		{"v7-header.nettrace", "stat", "V6-style header with major version 7", func() ([]byte, error) {
			b := append([]byte(nil), v6...)
			binary.LittleEndian.PutUint32(b[12:], 7)
			return b, nil
		}, nil},
		{"trace-object-v7.nettrace", "stat", "FastSerialization stream whose Trace object is version 7 (minimum reader version 7)", func() ([]byte, error) {
			b := append([]byte(nil), small...)
			binary.LittleEndian.PutUint32(b[35:], 7)
			binary.LittleEndian.PutUint32(b[39:], 7)
			return b, nil
		}, nil},
		{"block-size-4GiB.nettrace", "stat", "first EventBlock declares 0xFFFFFFF0 bytes (over the 256 MiB limit)", func() ([]byte, error) {
			return patchBlockSize(small, 0xFFFFFFF0)
		}, nil},
		{"block-size-255MiB-declared.nettrace", "stat", "first EventBlock declares 255 MiB; the file ends 70 KB later", func() ([]byte, error) {
			return patchBlockSize(small, 255<<20)
		}, nil},
		{"v6-block-size-16MiB-declared.nettrace", "stat", "V6 trace whose first event block declares 16 MiB (the V6 maximum); the file ends sooner", func() ([]byte, error) {
			return patchV6BlockSize(v6)
		}, nil},
		{"bad-varint.nettrace", "stat", "first compressed event header overwritten with 0xFF (overlong varints)", func() ([]byte, error) {
			return patchFirstEvent(small)
		}, nil},
		{"metadata-nested-100k.nettrace", "stat", "a metadata record whose field list nests 100,000 structs deep", func() ([]byte, error) {
			return nestedMetadata(100_000)
		}, nil},
		{"block-256MiB.nettrace", "stat,gc", "valid trace whose events sit in one 255 MiB event block (the reader's limit is 256 MiB)", nil, func(w *bufio.Writer) error {
			return oneHugeBlock(w, 255<<20)
		}},
		{"stacks-3M.nettrace", "stat,profile", "valid trace: 3,000,000 samples with distinct stacks, no sequence point", nil, func(w *bufio.Writer) error {
			return distinctStacks(w, 3_000_000)
		}},
		{"threads-600k.nettrace", "stat,profile,heap,locks", "valid trace: 600,000 threads, each with a sample, an allocation and a lock wait", nil, func(w *bufio.Writer) error {
			return manyThreads(w, 600_000)
		}},
	}
	for _, f := range files {
		path := filepath.Join(*dir, f.name)
		if err := write(path, f); err != nil {
			fail(fmt.Errorf("%s: %w", f.name, err))
		}
		fmt.Printf("%s\t%s\t%s\n", f.name, f.cmds, f.what)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "hostile:", err)
	os.Exit(1)
}

func constant(b []byte) func() ([]byte, error) { return func() ([]byte, error) { return b, nil } }

func write(path string, f file) error {
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	defer out.Close()
	w := bufio.NewWriterSize(out, 1<<20)
	if f.stream != nil {
		err = f.stream(w)
	} else {
		var b []byte
		if b, err = f.data(); err == nil {
			_, err = w.Write(b)
		}
	}
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = out.Close()
	}
	return err
}

func random(n int) []byte {
	rng := rand.New(rand.NewPCG(42, 17))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// generated is a valid synthetic trace of about n bytes.
func generated(n int64) ([]byte, error) {
	var b bytes.Buffer
	_, err := tracegen.Large(&b, n, 7)
	return b.Bytes(), err
}

// rewrite copies a trace through the writer with other options.
func rewrite(src []byte, opt nettrace.WriterOptions) ([]byte, error) {
	r, err := nettrace.NewReader(bytes.NewReader(src))
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	w, err := nettrace.NewWriter(&b, *r.Header(), opt)
	if err != nil {
		return nil, err
	}
	for {
		ev, err := r.Next()
		if err != nil {
			break
		}
		if err := w.WriteEvent(ev); err != nil {
			return nil, err
		}
	}
	return b.Bytes(), w.Close()
}

// headerLen is the length of a V4 stream's header: magic, signature and
// the Trace object, up to the first block.
func headerLen(b []byte) int {
	first := len(b)
	for _, name := range []string{"MetadataBlock", "StackBlock", "EventBlock", "SPBlock"} {
		if i := bytes.Index(b, []byte(name)); i >= 0 && i < first {
			first = i
		}
	}
	return first - 15 // the block's object header before its name
}

// patchBlockSize sets the declared size of the first EventBlock.
func patchBlockSize(src []byte, size uint32) ([]byte, error) {
	b := append([]byte(nil), src...)
	i := bytes.Index(b, []byte("EventBlock"))
	if i < 0 {
		return nil, fmt.Errorf("no EventBlock")
	}
	at := i + len("EventBlock") + 1 // after the name's end-object tag
	binary.LittleEndian.PutUint32(b[at:], size)
	return b, nil
}

// patchFirstEvent overwrites the first event header of the first
// EventBlock with 0xFF bytes: every flag set, every varint overlong.
func patchFirstEvent(src []byte) ([]byte, error) {
	b := append([]byte(nil), src...)
	i := bytes.Index(b, []byte("EventBlock"))
	if i < 0 {
		return nil, fmt.Errorf("no EventBlock")
	}
	at := i + len("EventBlock") + 1
	size := int(binary.LittleEndian.Uint32(b[at:]))
	content := at + 4
	content += (4 - content%4) % 4
	hdr := int(binary.LittleEndian.Uint16(b[content:])) // the block header's own size
	ev := content + hdr
	for k := ev; k < ev+64 && k < content+size; k++ {
		b[k] = 0xFF
	}
	return b, nil
}

// patchV6BlockSize sets the first V6 event block's declared size to the
// largest a V6 block header can say.
func patchV6BlockSize(src []byte) ([]byte, error) {
	b := append([]byte(nil), src...)
	p := 20 // magic, V6 marker, major, minor
	for p+4 <= len(b) {
		h := binary.LittleEndian.Uint32(b[p:])
		kind, size := byte(h>>24), int(h&0xFFFFFF)
		if kind == 2 { // event block
			binary.LittleEndian.PutUint32(b[p:], 2<<24|0xFFFFFF)
			return b, nil
		}
		p += 4 + size
	}
	return nil, fmt.Errorf("no V6 event block")
}

var header = nettrace.Header{
	SyncTimeUTC:        time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
	SyncTimeQPC:        1_000_000_000,
	QPCFrequency:       1_000_000_000,
	PointerSize:        8,
	ProcessID:          4242,
	NumberOfProcessors: 8,
}

// nestedMetadata is a valid trace with one event whose metadata's V1 field
// list nests depth structs: written with a placeholder field name of the
// same size, then the placeholder is replaced by the nesting.
func nestedMetadata(depth int) ([]byte, error) {
	// Each level: type code 1 (object), field count 1 (8 bytes); the
	// placeholder's UTF-16 name is as long.
	name := bytes.Repeat([]byte{'Q'}, depth*4)
	m := &nettrace.Metadata{Provider: "Hostile", EventID: 1, EventName: "Nested", HasFields: true,
		Fields: []nettrace.Field{{Name: string(name), Type: nettrace.FieldType{Code: nettrace.TypeUInt32}}}}
	var out bytes.Buffer
	w, err := nettrace.NewWriter(&out, header, nettrace.WriterOptions{})
	if err != nil {
		return nil, err
	}
	if err := w.WriteEvent(&nettrace.Event{Meta: m, Timestamp: header.SyncTimeQPC + 1, ThreadID: 1, CaptureThreadID: 1, Payload: []byte{1, 2, 3, 4}}); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	b := out.Bytes()
	ph := make([]byte, 0, len(name)*2)
	for _, c := range name {
		ph = append(ph, c, 0)
	}
	i := bytes.Index(b, ph)
	if i < 4 {
		return nil, fmt.Errorf("placeholder not found")
	}
	// From the field's type code (4 bytes before its name) on: object,
	// one field, again and again.
	p := i - 4
	for k := 0; k < depth*2+1 && p+8 <= i+len(ph); k++ {
		binary.LittleEndian.PutUint32(b[p:], uint32(nettrace.TypeObject))
		binary.LittleEndian.PutUint32(b[p+4:], 1)
		p += 8
	}
	return b, nil
}

var (
	metaSample = &nettrace.Metadata{Provider: nettrace.ProviderSampleProfiler, EventID: 0, Level: 4, HasFields: true}
	metaAlloc  = &nettrace.Metadata{Provider: nettrace.ProviderRuntime, EventID: 10, Version: 4, Level: 5, Keywords: 1, HasFields: true}
	metaCStart = &nettrace.Metadata{Provider: nettrace.ProviderRuntime, EventID: 81, Version: 2, Level: 4, Keywords: 0x4000, HasFields: true}
	metaCStop  = &nettrace.Metadata{Provider: nettrace.ProviderRuntime, EventID: 91, Version: 1, Level: 4, Keywords: 0x4000, HasFields: true}
	metaCustom = &nettrace.Metadata{Provider: "Hostile", EventID: 2, EventName: "Big", HasFields: true}
)

// oneHugeBlock writes a valid trace whose events all sit in one event
// block of about size bytes. The writer caps its blocks at 8 MiB, so the
// events are written uncompressed (each header stands alone) and the
// blocks' contents are then joined into one.
func oneHugeBlock(out *bufio.Writer, size int) error {
	var buf bytes.Buffer
	w, err := nettrace.NewWriter(&buf, header, nettrace.WriterOptions{Uncompressed: true, SequencePointEvery: 1 << 40})
	if err != nil {
		return err
	}
	payload := bytes.Repeat([]byte{0xAB}, 4000)
	ev := nettrace.Event{Meta: metaCustom, ThreadID: 1, CaptureThreadID: 1, Payload: payload}
	for i := 0; i < size/4100; i++ {
		ev.Timestamp = header.SyncTimeQPC + int64(i+1)*1000
		ev.SequenceNumber = 0
		if err := w.WriteEvent(&ev); err != nil {
			return err
		}
	}
	if err := w.Close(); err != nil {
		return err
	}
	b, err := joinEventBlocks(buf.Bytes())
	if err != nil {
		return err
	}
	_, err = out.Write(b)
	return err
}

// v4Object is one block object of a V4 stream.
type v4Object struct {
	name    string
	head    []byte // from the begin tag to the name's end tag
	content []byte
}

// joinEventBlocks rewrites a V4 stream with every run of consecutive
// EventBlocks (of uncompressed events) joined into one block.
func joinEventBlocks(src []byte) ([]byte, error) {
	p := headerLen(src)
	out := append([]byte(nil), src[:p]...)
	var objs []v4Object
	for p < len(src) && src[p] != 1 { // 1: the end-of-stream null reference
		if p+15 > len(src) {
			return nil, fmt.Errorf("object header past the end at %d", p)
		}
		nameLen := int(binary.LittleEndian.Uint32(src[p+11:]))
		nameEnd := p + 15 + nameLen
		o := v4Object{name: string(src[p+15 : nameEnd]), head: src[p : nameEnd+1]}
		size := int(binary.LittleEndian.Uint32(src[nameEnd+1:]))
		c := nameEnd + 5
		c += (4 - c%4) % 4
		o.content = src[c : c+size]
		objs = append(objs, o)
		p = c + size + 1 // the object's end tag
	}
	emit := func(o v4Object) {
		out = append(out, o.head...)
		out = binary.LittleEndian.AppendUint32(out, uint32(len(o.content)))
		for len(out)%4 != 0 {
			out = append(out, 0)
		}
		out = append(out, o.content...)
		out = append(out, 6) // end of object
	}
	var joined *v4Object
	for _, o := range objs {
		if o.name == "EventBlock" {
			hs := int(binary.LittleEndian.Uint16(o.content))
			if joined == nil {
				joined = &v4Object{name: o.name, head: o.head, content: append([]byte(nil), o.content...)}
				continue
			}
			joined.content = append(joined.content, o.content[hs:]...)
			copy(joined.content[12:20], o.content[12:20]) // the block's max timestamp
			continue
		}
		if joined != nil {
			emit(*joined)
			joined = nil
		}
		emit(o)
	}
	if joined != nil {
		emit(*joined)
	}
	return append(out, src[p:]...), nil
}

// distinctStacks writes n samples, each with a stack no other has, and no
// sequence point until the end: a reader keeps every stack until then.
func distinctStacks(out *bufio.Writer, n int) error {
	w, err := nettrace.NewWriter(out, header, nettrace.WriterOptions{SequencePointEvery: 1 << 40})
	if err != nil {
		return err
	}
	stack := make([]uint64, 2)
	ev := nettrace.Event{Meta: metaSample, ThreadID: 7, CaptureThreadID: 1, Payload: []byte{2, 0, 0, 0}, Stack: stack}
	for i := 0; i < n; i++ {
		stack[0] = 0x7f0000000000 + uint64(i)*16
		stack[1] = 0x7f1000000000 + uint64(i%1000)*64
		ev.Timestamp = header.SyncTimeQPC + int64(i+1)*1000
		ev.SequenceNumber = 0
		if err := w.WriteEvent(&ev); err != nil {
			return err
		}
	}
	return w.Close()
}

// manyThreads writes, for each of n threads, a sample, an allocation tick
// and a contention start/stop, each thread its own capture thread.
func manyThreads(out *bufio.Writer, n int) error {
	w, err := nettrace.NewWriter(out, header, nettrace.WriterOptions{})
	if err != nil {
		return err
	}
	stack := []uint64{0x7f0000001000, 0x7f0000002000, 0x7f0000003000}
	var p []byte
	ts := header.SyncTimeQPC
	emit := func(m *nettrace.Metadata, tid uint64, payload []byte) error {
		ts += 100
		return w.WriteEvent(&nettrace.Event{Meta: m, Timestamp: ts, ThreadID: tid, CaptureThreadID: tid, Payload: payload, Stack: stack})
	}
	for i := 0; i < n; i++ {
		tid := uint64(100_000 + i)
		if err := emit(metaSample, tid, []byte{2, 0, 0, 0}); err != nil {
			return err
		}
		// AllocationTick v4: amount, kind, instance, amount64, type id,
		// type name, heap index, address, object size.
		p = binary.LittleEndian.AppendUint32(p[:0], 100_000)
		p = binary.LittleEndian.AppendUint32(p, 0)
		p = binary.LittleEndian.AppendUint16(p, 0)
		p = binary.LittleEndian.AppendUint64(p, 100_000)
		p = binary.LittleEndian.AppendUint64(p, 0x7f0000b00000)
		p = append(p, 'X', 0, 0, 0)
		p = binary.LittleEndian.AppendUint32(p, 0)
		p = binary.LittleEndian.AppendUint64(p, 0x7e0000000000+uint64(i)*32)
		p = binary.LittleEndian.AppendUint64(p, 24)
		if err := emit(metaAlloc, tid, p); err != nil {
			return err
		}
		// ContentionStart v2 (flags, instance, lock, object, owner) and
		// ContentionStop v1 (flags, instance, duration ns).
		p = append(p[:0], 0)
		p = binary.LittleEndian.AppendUint16(p, 0)
		p = binary.LittleEndian.AppendUint64(p, 0x7e0000100000+uint64(i%1000)*64)
		p = binary.LittleEndian.AppendUint64(p, 0x7e0000200000+uint64(i%1000)*64)
		p = binary.LittleEndian.AppendUint64(p, 0)
		if err := emit(metaCStart, tid, p); err != nil {
			return err
		}
		p = append(p[:0], 0)
		p = binary.LittleEndian.AppendUint16(p, 0)
		p = binary.LittleEndian.AppendUint64(p, 0x40c3880000000000) // 10,000 ns
		if err := emit(metaCStop, tid, p); err != nil {
			return err
		}
	}
	return w.Close()
}
