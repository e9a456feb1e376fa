package nettrace

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"sort"
	"time"
	"unicode/utf16"
	"unsafe"
)

// WriterOptions controls the shape of the stream a Writer produces.
type WriterOptions struct {
	// Format is FormatNetTraceV4 (the default; V5 metadata tags are written
	// when a Metadata has an opcode or array fields) or FormatNetTraceV6.
	Format int
	// BlockSize is the target size of an event block in bytes; the runtime
	// uses about 100 KB.
	BlockSize int
	// Uncompressed writes fixed-size event headers instead of the
	// compressed ones every runtime writes.
	Uncompressed bool
	// SequencePointEvery is the number of event bytes between sequence
	// points; the runtime uses about 10 MB.
	SequencePointEvery int
	// Unsorted flags no event as sorted, as the runtime flags the first
	// event of each thread's batch: readers then hold every event until a
	// sequence point (for tests of that case).
	Unsorted bool
}

const (
	defaultBlockSize = 100 << 10
	defaultSPEvery   = 10 << 20
	maxV6BlockSize   = 1<<24 - 1
)

// Writer produces a NetTrace stream laid out like the runtime's own (V4) or
// as the V6 specification describes: the same blocks, header compression,
// per-thread batches, sort flags, stack interning and sequence points.
// Events must be given in timestamp order for the reader to return them in
// that order. A Writer is not safe for concurrent use.
type Writer struct {
	bw  *bufio.Writer
	off int64 // absolute stream offset, for V4 alignment
	h   Header
	opt WriterOptions
	v6  bool
	err error

	metaByPtr  map[*Metadata]uint32
	lastMeta   *Metadata // one-entry cache in front of metaByPtr
	lastMetaID uint32
	metaByKey  map[string]uint32
	nextMeta   uint32
	metaBuf    []byte
	metaCount  int

	// Stacks are interned by hash; ids restart after every sequence point.
	stackByHash map[uint64]uint32
	stackColl   map[string]uint32
	stackIPs    []uint64 // ips of interned stacks, by id
	stackOff    []uint32 // offset into stackIPs for id i+1; one extra at end
	stackBuf    []byte
	stackFirst  uint32
	stackCount  uint32

	threads    map[uint64]*wThread // by capture thread id
	threadList []*wThread          // capture threads in first-seen order
	lastThread *wThread
	pend       []*wThread // threads with pending events
	pendBytes  int
	arena      []byte // payload bytes of pending events

	// V6 tables.
	threadIdx   map[uint64]uint64 // OS thread id -> thread index
	threadBuf   []byte
	labels      map[[32]byte]uint32
	labelBuf    []byte
	labelFirst  uint32
	labelCount  uint32
	labelNextID uint32

	sinceSP int64
	lastTS  int64
	anyTS   bool
	blk     []byte
	key     []byte
}

type wThread struct {
	id      uint64
	lastSeq uint32
	evs     []wEvent
}

type wEvent struct {
	meta   uint32
	seq    uint32
	thread uint64 // OS id (V4) or thread index (V6)
	proc   uint32
	stack  uint32
	label  uint32
	ts     int64
	act    GUID
	rel    GUID
	off    int
	n      int
}

// NewWriter writes the stream header and trace object or block for h.
// A zero PointerSize means 8 and a zero QPCFrequency means 1 GHz.
func NewWriter(w io.Writer, h Header, opt WriterOptions) (*Writer, error) {
	if opt.Format == 0 {
		opt.Format = FormatNetTraceV4
	}
	if opt.Format != FormatNetTraceV4 && opt.Format != FormatNetTraceV6 {
		return nil, fmt.Errorf("nettrace writer: format %d not supported (use %d or %d)", opt.Format, FormatNetTraceV4, FormatNetTraceV6)
	}
	if opt.BlockSize <= 0 {
		opt.BlockSize = defaultBlockSize
	}
	if opt.BlockSize > 8<<20 {
		opt.BlockSize = 8 << 20
	}
	if opt.SequencePointEvery <= 0 {
		opt.SequencePointEvery = defaultSPEvery
	}
	if h.PointerSize == 0 {
		h.PointerSize = 8
	}
	if h.PointerSize != 4 && h.PointerSize != 8 {
		return nil, fmt.Errorf("nettrace writer: pointer size %d (expected 4 or 8)", h.PointerSize)
	}
	if h.QPCFrequency == 0 {
		h.QPCFrequency = 1_000_000_000
	}
	if h.QPCFrequency < 0 {
		return nil, fmt.Errorf("nettrace writer: negative timestamp frequency %d", h.QPCFrequency)
	}
	h.FormatVersion = opt.Format
	wr := &Writer{
		bw:          bufio.NewWriterSize(w, 256<<10),
		h:           h,
		opt:         opt,
		v6:          opt.Format == FormatNetTraceV6,
		metaByPtr:   make(map[*Metadata]uint32),
		metaByKey:   make(map[string]uint32),
		nextMeta:    1,
		stackByHash: make(map[uint64]uint32),
		stackOff:    []uint32{0},
		threads:     make(map[uint64]*wThread),
		threadIdx:   make(map[uint64]uint64),
		labels:      make(map[[32]byte]uint32),
		labelNextID: 1,
	}
	if wr.v6 {
		wr.writeHeaderV6()
	} else {
		wr.writeHeaderV4()
	}
	if wr.err != nil {
		return nil, wr.err
	}
	return wr, nil
}

func (w *Writer) write(b []byte) {
	if w.err != nil {
		return
	}
	n, err := w.bw.Write(b)
	w.off += int64(n)
	if err != nil {
		w.err = err
	}
}

func appendU16(b []byte, v uint16) []byte { return binary.LittleEndian.AppendUint16(b, v) }
func appendU32(b []byte, v uint32) []byte { return binary.LittleEndian.AppendUint32(b, v) }
func appendU64(b []byte, v uint64) []byte { return binary.LittleEndian.AppendUint64(b, v) }

func appendUTF16Z(b []byte, s string) []byte {
	for _, u := range utf16.Encode([]rune(s)) {
		b = appendU16(b, u)
	}
	return appendU16(b, 0)
}

// appendUTF8 writes a V6 string: varuint byte length, then UTF-8.
func appendUTF8(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendSystemTime(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return append(b, make([]byte, 16)...)
	}
	t = t.UTC()
	for _, v := range []int{t.Year(), int(t.Month()), int(t.Weekday()), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond() / 1e6} {
		b = appendU16(b, uint16(v))
	}
	return b
}

func (w *Writer) writeHeaderV4() {
	b := append([]byte(nil), magicNettrace...)
	b = appendU32(b, 20)
	b = append(b, magicFastSer...)
	b = appendObjectHeader(b, "Trace", 4, 4)
	b = appendSystemTime(b, w.h.SyncTimeUTC)
	b = appendU64(b, uint64(w.h.SyncTimeQPC))
	b = appendU64(b, uint64(w.h.QPCFrequency))
	b = appendU32(b, uint32(w.h.PointerSize))
	b = appendU32(b, uint32(w.h.ProcessID))
	b = appendU32(b, uint32(w.h.NumberOfProcessors))
	b = appendU32(b, uint32(w.h.ExpectedCPUSamplingRate))
	b = append(b, tagEndObject)
	w.write(b)
}

func appendObjectHeader(b []byte, name string, version, minVersion uint32) []byte {
	b = append(b, tagBeginPrivateObject, tagBeginPrivateObject, tagNullReference)
	b = appendU32(b, version)
	b = appendU32(b, minVersion)
	b = appendU32(b, uint32(len(name)))
	b = append(b, name...)
	return append(b, tagEndObject)
}

// V6 block kinds.
const (
	v6EndOfStream   = 0
	v6Trace         = 1
	v6Event         = 2
	v6Metadata      = 3
	v6SequencePoint = 4
	v6Stack         = 5
	v6Thread        = 6
	v6RemoveThread  = 7
	v6LabelList     = 8
)

func (w *Writer) writeHeaderV6() {
	b := append([]byte(nil), magicNettrace...)
	b = appendU32(b, 0)
	b = appendU32(b, 6)
	b = appendU32(b, uint32(w.h.MinorVersion))
	w.write(b)
	c := appendSystemTime(nil, w.h.SyncTimeUTC)
	c = appendU64(c, uint64(w.h.SyncTimeQPC))
	c = appendU64(c, uint64(w.h.QPCFrequency))
	c = appendU32(c, uint32(w.h.PointerSize))
	kv := map[string]string{}
	for k, v := range w.h.KeyValues {
		kv[k] = v
	}
	if w.h.ProcessID != 0 {
		kv["ProcessId"] = fmt.Sprint(w.h.ProcessID)
	}
	if w.h.NumberOfProcessors != 0 {
		kv["HardwareThreadCount"] = fmt.Sprint(w.h.NumberOfProcessors)
	}
	if w.h.ExpectedCPUSamplingRate != 0 {
		kv["ExpectedCPUSamplingRate"] = fmt.Sprint(w.h.ExpectedCPUSamplingRate)
	}
	keys := make([]string, 0, len(kv))
	for k := range kv {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	c = appendU32(c, uint32(len(keys)))
	for _, k := range keys {
		c = appendUTF8(c, k)
		c = appendUTF8(c, kv[k])
	}
	w.writeBlockV6(v6Trace, c)
}

func (w *Writer) writeBlockV6(kind byte, content []byte) {
	if len(content) > maxV6BlockSize {
		if w.err == nil {
			w.err = fmt.Errorf("nettrace writer: V6 block of %d bytes exceeds the 16 MB limit", len(content))
		}
		return
	}
	var h [4]byte
	binary.LittleEndian.PutUint32(h[:], uint32(len(content))|uint32(kind)<<24)
	w.write(h[:])
	w.write(content)
}

// writeObjectV4 writes one V4 block object with its size, alignment
// padding (relative to the absolute stream offset) and end tag.
func (w *Writer) writeObjectV4(name string, content []byte) {
	b := appendObjectHeader(nil, name, 2, 2)
	b = appendU32(b, uint32(len(content)))
	w.write(b)
	if pad := (4 - w.off%4) % 4; pad > 0 {
		w.write(make([]byte, pad))
	}
	w.write(content)
	w.write([]byte{tagEndObject})
}

// WriteEvent queues one event. Its metadata is defined on first use (by
// pointer, or by equal content), its stack interned, its payload copied;
// a zero SequenceNumber is replaced by the capture thread's next one.
func (w *Writer) WriteEvent(ev *Event) error {
	if w.err != nil {
		return w.err
	}
	if ev.Meta == nil {
		return errors.New("nettrace writer: event without metadata")
	}
	mid := w.lastMetaID
	if ev.Meta != w.lastMeta {
		var err error
		if mid, err = w.metaID(ev.Meta); err != nil {
			w.err = err
			return err
		}
		w.lastMeta, w.lastMetaID = ev.Meta, mid
	}
	stack := uint32(0)
	if len(ev.Stack) > 0 {
		stack = w.internStack(ev.Stack)
	}
	t := w.lastThread
	if t == nil || t.id != ev.CaptureThreadID {
		if t = w.threads[ev.CaptureThreadID]; t == nil {
			t = &wThread{id: ev.CaptureThreadID}
			w.threads[ev.CaptureThreadID] = t
			w.threadList = append(w.threadList, t)
		}
		w.lastThread = t
	}
	seq := ev.SequenceNumber
	if seq == 0 {
		seq = t.lastSeq + 1
	}
	t.lastSeq = seq
	e := wEvent{
		meta: mid, seq: seq, thread: ev.ThreadID, proc: ev.ProcessorNumber, stack: stack,
		ts: ev.Timestamp, act: ev.ActivityID, rel: ev.RelatedActivityID,
		off: len(w.arena), n: len(ev.Payload),
	}
	if w.v6 {
		w.threadIndex(ev.CaptureThreadID)
		e.thread = w.threadIndex(ev.ThreadID)
		e.label = w.labelList(ev.ActivityID, ev.RelatedActivityID)
	}
	w.arena = append(w.arena, ev.Payload...)
	if len(t.evs) == 0 {
		w.pend = append(w.pend, t)
	}
	t.evs = append(t.evs, e)
	w.pendBytes += len(ev.Payload) + 12
	if w.opt.Uncompressed {
		w.pendBytes += 80
	}
	if !ev.ActivityID.IsZero() || !ev.RelatedActivityID.IsZero() {
		w.pendBytes += 32
	}
	if ev.Timestamp > w.lastTS || !w.anyTS {
		w.lastTS = ev.Timestamp
		w.anyTS = true
	}
	if w.pendBytes >= w.opt.BlockSize {
		w.flushEvents()
		if w.sinceSP >= int64(w.opt.SequencePointEvery) {
			w.writeSP()
		}
	}
	return w.err
}

// Offset is the number of stream bytes written so far, those still in the
// writer's buffer included (a generator of a given size stops on it).
func (w *Writer) Offset() int64 { return w.off }

// NoteSequence records that a capture thread has used sequence numbers up
// to seq although its later events were not written (they were dropped):
// the next sequence point says so, so readers count them as lost.
func (w *Writer) NoteSequence(captureThreadID uint64, seq uint32) {
	t := w.threads[captureThreadID]
	if t == nil {
		t = &wThread{id: captureThreadID}
		w.threads[captureThreadID] = t
		w.threadList = append(w.threadList, t)
		if w.v6 {
			w.threadIndex(captureThreadID)
		}
	}
	t.lastSeq = seq
}

// Flush writes every pending block and a sequence point.
func (w *Writer) Flush() error {
	if w.err != nil {
		return w.err
	}
	w.flushEvents()
	w.writeSP()
	if w.err == nil {
		w.err = w.bw.Flush()
	}
	return w.err
}

// EndOfStreamV4 is what ends a NetPerf V3 / NetTrace V4 stream after its
// last object: a copy cut between objects becomes complete by appending it.
var EndOfStreamV4 = []byte{tagNullReference}

// Close flushes and writes the end-of-stream marker. It does not close the
// underlying writer.
func (w *Writer) Close() error {
	if w.err != nil {
		return w.err
	}
	w.flushEvents()
	if len(w.threadList) > 0 || w.sinceSP > 0 {
		w.writeSP()
	}
	if w.v6 {
		w.writeBlockV6(v6EndOfStream, nil)
	} else {
		w.write([]byte{tagNullReference})
	}
	if w.err == nil {
		w.err = w.bw.Flush()
	}
	if w.err == nil {
		w.err = errClosed
		return nil
	}
	return w.err
}

var errClosed = errors.New("nettrace writer: closed")

// metaID returns the id for m, queueing its definition when new.
func (w *Writer) metaID(m *Metadata) (uint32, error) {
	if id, ok := w.metaByPtr[m]; ok {
		return id, nil
	}
	body, err := w.encodeMetadata(m)
	if err != nil {
		return 0, err
	}
	key := string(body)
	if id, ok := w.metaByKey[key]; ok {
		w.metaByPtr[m] = id
		return id, nil
	}
	id := w.nextMeta
	w.nextMeta++
	w.metaByPtr[m] = id
	w.metaByKey[key] = id
	w.appendMetadataRow(id, m, body)
	if len(w.metaBuf) >= w.opt.BlockSize {
		w.flushMetadata()
	}
	return id, nil
}

// encodeMetadata encodes m without its id: for V4 the provider name and
// event metadata blob with V5 tags, for V6 the row after the id.
func (w *Writer) encodeMetadata(m *Metadata) ([]byte, error) {
	if w.v6 {
		return encodeMetadataV6(m)
	}
	return encodeMetadataV4(m)
}

func encodeMetadataV4(m *Metadata) ([]byte, error) {
	b := appendUTF16Z(nil, m.Provider)
	empty := !m.HasFields && len(m.Fields) == 0 && m.EventID == 0 && m.EventName == "" &&
		m.Keywords == 0 && m.Version == 0 && m.Level == 0 && m.Opcode == 0
	if empty {
		return b, nil
	}
	b = appendU32(b, m.EventID)
	b = appendUTF16Z(b, m.EventName)
	b = appendU64(b, m.Keywords)
	b = appendU32(b, m.Version)
	b = appendU32(b, uint32(m.Level))
	v2 := false
	for i := range m.Fields {
		need, err := fieldNeedsV2(&m.Fields[i].Type, 0)
		if err != nil {
			return nil, fmt.Errorf("nettrace writer: %s/%d field %q: %w", printable(m.Provider), m.EventID, m.Fields[i].Name, err)
		}
		v2 = v2 || need
	}
	if v2 {
		b = appendU32(b, 0)
	} else if m.HasFields || len(m.Fields) > 0 || m.Opcode != 0 {
		// The field count must be present before any tag.
		b = appendU32(b, uint32(len(m.Fields)))
		b = appendV1Fields(b, m.Fields)
	}
	if m.Opcode != 0 {
		b = appendU32(b, 1)
		b = append(b, 1, m.Opcode)
	}
	if v2 {
		t := appendU32(nil, uint32(len(m.Fields)))
		for _, f := range m.Fields {
			t = appendV2Field(t, f)
		}
		b = appendU32(b, uint32(len(t)))
		b = append(b, 2)
		b = append(b, t...)
	}
	return b, nil
}

// fieldNeedsV2 reports whether a V4 field list needs the V2Params tag
// (arrays) and rejects types V4 cannot express.
func fieldNeedsV2(t *FieldType, depth int) (bool, error) {
	if depth > maxFieldDepth {
		return false, errors.New("fields nested too deeply")
	}
	switch {
	case t.Code == TypeArray:
		if t.Elem == nil {
			return false, errors.New("array without element type")
		}
		if _, err := fieldNeedsV2(t.Elem, depth+1); err != nil {
			return false, err
		}
		return true, nil
	case t.Code == TypeObject:
		need := false
		for i := range t.Fields {
			n, err := fieldNeedsV2(&t.Fields[i].Type, depth+1)
			if err != nil {
				return false, err
			}
			need = need || n
		}
		return need, nil
	case t.Code >= TypeVarInt:
		return false, fmt.Errorf("type code %d exists only in NetTrace V6", t.Code)
	}
	return false, nil
}

func appendV1Fields(b []byte, fields []Field) []byte {
	for _, f := range fields {
		b = appendU32(b, uint32(f.Type.Code))
		if f.Type.Code == TypeObject {
			b = appendU32(b, uint32(len(f.Type.Fields)))
			b = appendV1Fields(b, f.Type.Fields)
		}
		b = appendUTF16Z(b, f.Name)
	}
	return b
}

func appendV2Field(b []byte, f Field) []byte {
	start := len(b)
	b = appendU32(b, 0)
	b = appendUTF16Z(b, f.Name)
	b = appendV2Type(b, &f.Type)
	binary.LittleEndian.PutUint32(b[start:], uint32(len(b)-start))
	return b
}

func appendV2Type(b []byte, t *FieldType) []byte {
	b = appendU32(b, uint32(t.Code))
	switch t.Code {
	case TypeArray:
		b = appendV2Type(b, t.Elem)
	case TypeObject:
		b = appendU32(b, uint32(len(t.Fields)))
		for _, f := range t.Fields {
			b = appendV2Field(b, f)
		}
	}
	return b
}

func encodeMetadataV6(m *Metadata) ([]byte, error) {
	b := appendUTF8(nil, m.Provider)
	b = binary.AppendUvarint(b, uint64(m.EventID))
	b = appendUTF8(b, m.EventName)
	var err error
	if b, err = appendV6Fields(b, m.Fields, 0); err != nil {
		return nil, fmt.Errorf("nettrace writer: %s/%d: %w", printable(m.Provider), m.EventID, err)
	}
	if m.Version > 255 {
		return nil, fmt.Errorf("nettrace writer: %s/%d: version %d does not fit V6 metadata (0-255)", printable(m.Provider), m.EventID, m.Version)
	}
	var o []byte
	if m.Opcode != 0 {
		o = append(o, 1, m.Opcode)
	}
	if m.Keywords != 0 {
		o = append(o, 3)
		o = appendU64(o, m.Keywords)
	}
	if m.Level != 0 {
		o = append(o, 8, m.Level)
	}
	if m.Version != 0 {
		o = append(o, 9, uint8(m.Version))
	}
	b = appendU16(b, uint16(len(o)))
	return append(b, o...), nil
}

func appendV6Fields(b []byte, fields []Field, depth int) ([]byte, error) {
	if depth > maxFieldDepth {
		return nil, errors.New("fields nested too deeply")
	}
	if len(fields) > 0xFFFF {
		return nil, fmt.Errorf("%d fields exceed the V6 limit", len(fields))
	}
	b = appendU16(b, uint16(len(fields)))
	for _, f := range fields {
		start := len(b)
		b = appendU16(b, 0)
		b = appendUTF8(b, f.Name)
		var err error
		if b, err = appendV6Type(b, &f.Type, depth); err != nil {
			return nil, fmt.Errorf("field %q: %w", f.Name, err)
		}
		n := len(b) - start - 2
		if n > 0xFFFF {
			return nil, fmt.Errorf("field %q description exceeds 64 KB", f.Name)
		}
		binary.LittleEndian.PutUint16(b[start:], uint16(n))
	}
	return b, nil
}

func appendV6Type(b []byte, t *FieldType, depth int) ([]byte, error) {
	b = append(b, byte(t.Code))
	var err error
	switch t.Code {
	case TypeArray, TypeFixedLengthArray, TypeRelLoc, TypeDataLoc:
		if t.Elem == nil {
			return nil, fmt.Errorf("type %d without element type", t.Code)
		}
		if b, err = appendV6Type(b, t.Elem, depth+1); err != nil {
			return nil, err
		}
		if t.Code == TypeFixedLengthArray {
			if t.FixedLen < 0 || t.FixedLen > 0xFFFF {
				return nil, fmt.Errorf("fixed array length %d out of range", t.FixedLen)
			}
			b = appendU16(b, uint16(t.FixedLen))
		}
	case TypeObject:
		return appendV6Fields(b, t.Fields, depth+1)
	}
	return b, nil
}

func (w *Writer) appendMetadataRow(id uint32, m *Metadata, body []byte) {
	w.metaCount++
	if w.v6 {
		row := binary.AppendUvarint(nil, uint64(id))
		row = append(row, body...)
		if len(row) > 0xFFFF {
			w.err = fmt.Errorf("nettrace writer: metadata for %s/%d exceeds 64 KB", printable(m.Provider), m.EventID)
			return
		}
		w.metaBuf = appendU16(w.metaBuf, uint16(len(row)))
		w.metaBuf = append(w.metaBuf, row...)
		return
	}
	payload := appendU32(nil, id)
	payload = append(payload, body...)
	if w.opt.Uncompressed {
		w.metaBuf = appendUncompressedV4(w.metaBuf, &wEvent{ts: w.lastTS}, 0, true, payload)
		return
	}
	// Compressed header: everything zero except the payload size; the
	// state resets per block, so each blob says its size.
	w.metaBuf = append(w.metaBuf, 0x80)
	w.metaBuf = binary.AppendUvarint(w.metaBuf, 0) // timestamp delta
	w.metaBuf = binary.AppendUvarint(w.metaBuf, uint64(len(payload)))
	w.metaBuf = append(w.metaBuf, payload...)
}

func (w *Writer) flushMetadata() {
	if len(w.metaBuf) == 0 {
		return
	}
	if w.v6 {
		c := append(w.blk[:0], 0, 0) // header size 0: no header
		c = append(c, w.metaBuf...)
		w.writeBlockV6(v6Metadata, c)
		w.blk = c
	} else {
		c := w.blockHeader(0, 0)
		c = append(c, w.metaBuf...)
		w.writeObjectV4("MetadataBlock", c)
		w.blk = c
	}
	w.metaBuf = w.metaBuf[:0]
}

// blockHeader starts an Event/Metadata block: header size 20, flags,
// min and max timestamps.
func (w *Writer) blockHeader(minTS, maxTS int64) []byte {
	c := appendU16(w.blk[:0], 20)
	flags := uint16(1)
	if w.opt.Uncompressed {
		flags = 0
	}
	c = appendU16(c, flags)
	c = appendU64(c, uint64(minTS))
	return appendU64(c, uint64(maxTS))
}

// ipBytes views ips as bytes (little-endian hosts only need no copy; the
// view is only hashed and compared, never written out).
func ipBytes(ips []uint64) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(ips))), len(ips)*8)
}

var stackSeed = maphash.MakeSeed()

// internStack returns the id of ips in the current sequence-point region,
// queueing a stack-block entry when it is new.
func (w *Writer) internStack(ips []uint64) uint32 {
	h := maphash.Bytes(stackSeed, ipBytes(ips))
	if id, ok := w.stackByHash[h]; ok {
		if bytes.Equal(ipBytes(w.stackIPs[w.stackOff[id-1]:w.stackOff[id]]), ipBytes(ips)) {
			return id
		}
		w.key = w.key[:0]
		for _, ip := range ips {
			w.key = appendU64(w.key, ip)
		}
		if id, ok := w.stackColl[string(w.key)]; ok {
			return id
		}
	}
	id := uint32(len(w.stackOff))
	if _, taken := w.stackByHash[h]; taken {
		if w.stackColl == nil {
			w.stackColl = make(map[string]uint32)
		}
		w.stackColl[string(w.key)] = id
	} else {
		w.stackByHash[h] = id
	}
	w.stackIPs = append(w.stackIPs, ips...)
	w.stackOff = append(w.stackOff, uint32(len(w.stackIPs)))
	if w.stackCount == 0 {
		w.stackFirst = id
	}
	w.stackCount++
	w.stackBuf = appendU32(w.stackBuf, uint32(len(ips)*w.h.PointerSize))
	for _, ip := range ips {
		if w.h.PointerSize == 8 {
			w.stackBuf = appendU64(w.stackBuf, ip)
		} else {
			w.stackBuf = appendU32(w.stackBuf, uint32(ip))
		}
	}
	if len(w.stackBuf) >= w.opt.BlockSize {
		w.flushStacks()
	}
	return id
}

// numbered builds, in w.blk, the body of a block of count entries numbered
// from first: the layout stack and label-list blocks share.
func (w *Writer) numbered(first, count uint32, entries []byte) []byte {
	c := appendU32(w.blk[:0], first)
	c = appendU32(c, count)
	w.blk = append(c, entries...)
	return w.blk
}

func (w *Writer) flushStacks() {
	if w.stackCount == 0 {
		return
	}
	c := w.numbered(w.stackFirst, w.stackCount, w.stackBuf)
	if w.v6 {
		w.writeBlockV6(v6Stack, c)
	} else {
		w.writeObjectV4("StackBlock", c)
	}
	w.stackBuf = w.stackBuf[:0]
	w.stackCount = 0
}

// threadIndex returns the V6 thread index of an OS thread, queueing a
// thread-block row when it is new. Indexes are never reused.
func (w *Writer) threadIndex(tid uint64) uint64 {
	if idx, ok := w.threadIdx[tid]; ok {
		return idx
	}
	idx := uint64(len(w.threadIdx) + 1)
	w.threadIdx[tid] = idx
	row := binary.AppendUvarint(nil, idx)
	if w.h.ProcessID != 0 {
		row = append(row, 2)
		row = binary.AppendUvarint(row, uint64(w.h.ProcessID))
	}
	row = append(row, 3)
	row = binary.AppendUvarint(row, tid)
	w.threadBuf = appendU16(w.threadBuf, uint16(len(row)))
	w.threadBuf = append(w.threadBuf, row...)
	if len(w.threadBuf) >= w.opt.BlockSize {
		w.flushThreads()
	}
	return idx
}

func (w *Writer) flushThreads() {
	if len(w.threadBuf) > 0 {
		w.writeBlockV6(v6Thread, w.threadBuf)
		w.threadBuf = w.threadBuf[:0]
	}
}

// labelList returns the V6 label list id for an activity pair (0 when both
// are empty); ids restart after every sequence point.
func (w *Writer) labelList(act, rel GUID) uint32 {
	if act.IsZero() && rel.IsZero() {
		return 0
	}
	var k [32]byte
	copy(k[:16], act[:])
	copy(k[16:], rel[:])
	if id, ok := w.labels[k]; ok {
		return id
	}
	id := w.labelNextID
	w.labelNextID++
	w.labels[k] = id
	if w.labelCount == 0 {
		w.labelFirst = id
	}
	w.labelCount++
	if !act.IsZero() {
		kind := byte(1)
		if rel.IsZero() {
			kind |= 0x80
		}
		w.labelBuf = append(w.labelBuf, kind)
		w.labelBuf = append(w.labelBuf, act[:]...)
	}
	if !rel.IsZero() {
		w.labelBuf = append(w.labelBuf, 2|0x80)
		w.labelBuf = append(w.labelBuf, rel[:]...)
	}
	if len(w.labelBuf) >= w.opt.BlockSize {
		w.flushLabels()
	}
	return id
}

func (w *Writer) flushLabels() {
	if w.labelCount == 0 {
		return
	}
	w.writeBlockV6(v6LabelList, w.numbered(w.labelFirst, w.labelCount, w.labelBuf))
	w.labelBuf = w.labelBuf[:0]
	w.labelCount = 0
}

// flushEvents writes the pending definitions, then the pending events as
// one event block: thread by thread, oldest first event first, the first
// event of each thread's batch flagged as sorted (as the runtime does).
func (w *Writer) flushEvents() {
	w.flushMetadata()
	if w.v6 {
		w.flushThreads()
	}
	w.flushStacks()
	if w.v6 {
		w.flushLabels()
	}
	if len(w.pend) == 0 || w.err != nil {
		return
	}
	sort.SliceStable(w.pend, func(i, j int) bool { return w.pend[i].evs[0].ts < w.pend[j].evs[0].ts })
	minTS, maxTS := w.pend[0].evs[0].ts, w.pend[0].evs[0].ts
	for _, t := range w.pend {
		for i := range t.evs {
			maxTS = max(maxTS, t.evs[i].ts)
			minTS = min(minTS, t.evs[i].ts)
		}
	}
	c := w.blockHeader(minTS, maxTS)
	var prev wEvent
	var prevCapture uint64
	for _, t := range w.pend {
		capture := t.id
		if w.v6 {
			capture = w.threadIdx[t.id]
		}
		for i := range t.evs {
			e := &t.evs[i]
			payload := w.arena[e.off : e.off+e.n]
			sorted := i == 0 && !w.opt.Unsorted
			if w.opt.Uncompressed {
				if w.v6 {
					c = appendUncompressedV6(c, e, capture, sorted, payload)
				} else {
					c = appendUncompressedV4(c, e, capture, sorted, payload)
				}
				continue
			}
			c = w.appendCompressed(c, e, &prev, capture, prevCapture, sorted, payload)
			prevCapture = capture
		}
		t.evs = t.evs[:0]
	}
	if w.v6 {
		w.writeBlockV6(v6Event, c)
	} else {
		w.writeObjectV4("EventBlock", c)
	}
	w.sinceSP += int64(len(c))
	w.blk = c
	w.pend = w.pend[:0]
	w.pendBytes = 0
	w.arena = w.arena[:0]
}

func (w *Writer) appendCompressed(c []byte, e, prev *wEvent, capture, prevCapture uint64, sorted bool, payload []byte) []byte {
	var flags byte
	if e.meta != prev.meta {
		flags |= 0x01
	}
	if e.seq != prev.seq+1 || capture != prevCapture || e.proc != prev.proc {
		flags |= 0x02
	}
	if e.thread != prev.thread {
		flags |= 0x04
	}
	if e.stack != prev.stack {
		flags |= 0x08
	}
	if w.v6 {
		if e.label != prev.label {
			flags |= 0x10
		}
	} else {
		if e.act != prev.act {
			flags |= 0x10
		}
		if e.rel != prev.rel {
			flags |= 0x20
		}
	}
	if sorted {
		flags |= 0x40
	}
	if e.n != prev.n {
		flags |= 0x80
	}
	c = append(c, flags)
	if flags&0x01 != 0 {
		c = binary.AppendUvarint(c, uint64(e.meta))
	}
	if flags&0x02 != 0 {
		c = binary.AppendUvarint(c, uint64(e.seq-prev.seq-1))
		c = binary.AppendUvarint(c, capture)
		c = binary.AppendUvarint(c, uint64(e.proc))
	}
	if flags&0x04 != 0 {
		c = binary.AppendUvarint(c, e.thread)
	}
	if flags&0x08 != 0 {
		c = binary.AppendUvarint(c, uint64(e.stack))
	}
	c = binary.AppendUvarint(c, uint64(e.ts-prev.ts))
	if w.v6 {
		if flags&0x10 != 0 {
			c = binary.AppendUvarint(c, uint64(e.label))
		}
	} else {
		if flags&0x10 != 0 {
			c = append(c, e.act[:]...)
		}
		if flags&0x20 != 0 {
			c = append(c, e.rel[:]...)
		}
	}
	if flags&0x80 != 0 {
		c = binary.AppendUvarint(c, uint64(e.n))
	}
	*prev = *e
	return append(c, payload...)
}

// appendUncompressedV4 writes an 80-byte header, the payload and padding
// to 4 bytes (block content starts 4-aligned, so this is absolute).
func appendUncompressedV4(c []byte, e *wEvent, capture uint64, sorted bool, payload []byte) []byte {
	start := len(c)
	c = appendU32(c, 0)
	c = appendUncompressedHead(c, e, capture, sorted)
	c = append(c, e.act[:]...)
	c = append(c, e.rel[:]...)
	c = appendU32(c, uint32(len(payload)))
	c = append(c, payload...)
	for len(c)%4 != 0 {
		c = append(c, 0)
	}
	binary.LittleEndian.PutUint32(c[start:], uint32(len(c)-start-4))
	return c
}

// appendUncompressedHead writes the fields V4's and V6's uncompressed
// headers share: the metadata id (its high bit set when the block is not
// sorted), sequence number, thread, capture thread, processor, stack id
// and timestamp.
func appendUncompressedHead(c []byte, e *wEvent, capture uint64, sorted bool) []byte {
	id := e.meta
	if !sorted {
		id |= 0x80000000
	}
	c = appendU32(c, id)
	c = appendU32(c, e.seq)
	c = appendU64(c, e.thread)
	c = appendU64(c, capture)
	c = appendU32(c, e.proc)
	c = appendU32(c, e.stack)
	return appendU64(c, uint64(e.ts))
}

// appendUncompressedV6 writes the 52-byte V6 header and the payload (V6
// has no padding).
func appendUncompressedV6(c []byte, e *wEvent, capture uint64, sorted bool, payload []byte) []byte {
	c = appendU32(c, uint32(48+len(payload)))
	c = appendUncompressedHead(c, e, capture, sorted)
	c = appendU32(c, e.label)
	c = appendU32(c, uint32(len(payload)))
	return append(c, payload...)
}

// writeSP writes a sequence point listing every capture thread's last
// sequence number, then restarts stack (and V6 label) ids.
func (w *Writer) writeSP() {
	if w.err != nil {
		return
	}
	if w.v6 {
		c := appendU64(w.blk[:0], uint64(w.lastTS))
		c = appendU32(c, 0)
		c = appendU32(c, uint32(len(w.threadList)))
		for _, t := range w.threadList {
			c = binary.AppendUvarint(c, w.threadIdx[t.id])
			c = binary.AppendUvarint(c, uint64(t.lastSeq))
		}
		w.writeBlockV6(v6SequencePoint, c)
		w.blk = c
		clear(w.labels)
		w.labelNextID = 1
	} else {
		c := appendU64(w.blk[:0], uint64(w.lastTS))
		c = appendU32(c, uint32(len(w.threadList)))
		for _, t := range w.threadList {
			c = appendU64(c, t.id)
			c = appendU32(c, t.lastSeq)
		}
		w.writeObjectV4("SPBlock", c)
		w.blk = c
	}
	clear(w.stackByHash)
	w.stackColl = nil
	w.stackIPs = w.stackIPs[:0]
	w.stackOff = w.stackOff[:1]
	w.sinceSP = 0
}
