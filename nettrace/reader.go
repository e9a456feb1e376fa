package nettrace

import (
	"bytes"
	"fmt"
	"io"
	"math"
)

// Stats describes what a Reader has seen so far. It is complete once Next
// has returned io.EOF or a TruncatedError.
type Stats struct {
	Events          uint64 // events delivered
	EventsWithStack uint64 // of which with a non-empty resolved stack
	LostEvents      uint64 // events the writer dropped (sequence gaps)
	Metadata        int    // metadata records defined
	Stacks          int    // stacks defined in stack blocks (or inline, V3)
	SequencePoints  int
	Blocks          map[string]int // objects/blocks by kind
	CaptureThreads  int            // distinct capture threads
	V5Tags          bool           // V5 metadata tags were seen
	MaxStackDepth   int
	Truncated       bool
	TruncatedAt     int64
	Bytes           int64 // stream bytes consumed
	// UnknownMetadataRefs counts events whose metadata id was never
	// defined; they are skipped, not delivered.
	UnknownMetadataRefs uint64
	// NoTraceObject is set when the stream had blocks but no Trace object;
	// the header then holds assumed values (pointer size 8, 1 GHz clock).
	NoTraceObject bool
	// ForcedFlushes counts times the sort queue hit its cap and was drained
	// early; events may then be out of timestamp order (never happens with
	// runtime-written streams).
	ForcedFlushes int
	// CutEvent names the event whose header was read but whose payload the
	// truncation cut off (not delivered); empty otherwise.
	CutEvent string
}

// EffectiveVersion is the version the catalog of real traces uses: the
// container version, with 5 for a V4 container that carried V5 tags.
func (s *Stats) effective(container int) int {
	if container == FormatNetTraceV4 && s.V5Tags {
		return 5
	}
	return container
}

// Reader decodes one trace stream. Create it with NewReader, then call Next
// until it returns an error: io.EOF at a clean end, a *TruncatedError (after
// every complete event was delivered) when the stream was cut, or another
// error for corrupt or unsupported input.
type Reader struct {
	src   *source
	hdr   Header
	stats Stats
	parse func() error // reads and processes the next object/block
	// blockNext decodes the next event of the current event block (r.blk);
	// set per format.
	blockNext func() error
	done      bool  // end of stream reached (clean or not)
	endErr    error // io.EOF or the error that ended the stream

	metas   []*Metadata // by id; ids are small and dense
	metaMap map[uint32]*Metadata

	stacks stackCache

	threads    map[uint64]*threadQueue
	lastThread *threadQueue
	heap       queueHeap
	order      uint64 // tie-breaker: file order

	// Incremental event-block state.
	blk       *blockBuf
	blkPos    int
	blkFlags  uint16
	blkStart  int64
	blkTrunc  *TruncatedError // the current block was cut by the end of input
	prev      rawHeader       // previous header for compression
	limit     int64           // queued events below this timestamp may go out
	flushAll  bool            // every queued event may go out (sequence point, end)
	forced    bool            // the queue cap was hit: drain before reading on
	queued    int             // events waiting in thread queues
	fresh     []*threadQueue  // queues that became non-empty, not yet in the heap
	sorted    rec             // a sorted event waiting for older queued events
	hasSorted bool
	pendingSP *spState

	emitted *blockBuf // buffer behind the last delivered event
	ev      Event
	pool    []*blockBuf

	v3stacks []uint64 // inline stacks of the current NetPerf V3 block

	v6 *v6State // NetTrace V6 tables (threads, label lists); nil otherwise
}

// spState is a sequence point to apply once queued events drained.
type spState struct {
	threads []spThread
}

type spThread struct {
	capture uint64
	seq     uint32
}

// NewReader reads the stream header and trace object. The returned error is
// an *UnsupportedVersionError for formats outside V3–V6, a *FormatError or
// *TruncatedError for bad input.
func NewReader(r io.Reader) (*Reader, error) {
	rd := &Reader{
		src:     newSource(r),
		threads: make(map[uint64]*threadQueue),
		limit:   math.MinInt64,
	}
	rd.stats.Blocks = make(map[string]int)
	rd.blockNext = rd.nextInBlock
	if err := rd.start(); err != nil {
		return nil, err
	}
	return rd, nil
}

// Header returns the trace header.
func (r *Reader) Header() *Header { return &r.hdr }

// Stats returns counters about what was read so far.
func (r *Reader) Stats() *Stats {
	r.stats.Bytes = r.src.off
	r.stats.CaptureThreads = len(r.threads)
	return &r.stats
}

// FormatVersion is the container version, reported as 5 for a V4 container
// whose metadata used V5 tags (known for certain only at the end).
func (r *Reader) FormatVersion() int { return r.stats.effective(r.hdr.FormatVersion) }

// Metadata returns every metadata record defined so far, by id order.
func (r *Reader) Metadata() []*Metadata {
	var out []*Metadata
	for _, m := range r.metas {
		if m != nil {
			out = append(out, m)
		}
	}
	for _, m := range r.metaMap {
		out = append(out, m)
	}
	return out
}

var (
	magicNettrace = []byte("Nettrace")
	magicFastSer  = []byte("!FastSerialization.1")
)

func (r *Reader) start() error {
	s := r.src
	var head [8]byte
	if err := s.readFull(head[:]); err != nil {
		if isEOF(err) {
			return &TruncatedError{Offset: 0, What: "stream header"}
		}
		return err
	}
	if bytes.Equal(head[:], magicNettrace) {
		n, err := s.u32()
		if err != nil {
			return s.truncated(8, "stream header")
		}
		if n == 0 {
			return r.startV6()
		}
		if n != 20 {
			return &FormatError{Offset: 8, Msg: fmt.Sprintf("expected serialization header length 20 or V6 marker 0, found %d", n)}
		}
		var sig [20]byte
		if err := s.readFull(sig[:]); err != nil {
			return s.truncated(12, "stream header")
		}
		if !bytes.Equal(sig[:], magicFastSer) {
			return &FormatError{Offset: 12, Msg: "missing !FastSerialization.1 signature"}
		}
		return r.startFastSerialization(false)
	}
	// NetPerf (no magic): the first 4 bytes are the signature length.
	if le32(head[:4]) == 20 && bytes.Equal(head[4:], magicFastSer[:4]) {
		var rest [16]byte
		if err := s.readFull(rest[:]); err != nil {
			return s.truncated(8, "stream header")
		}
		if !bytes.Equal(rest[:], magicFastSer[4:]) {
			return &FormatError{Offset: 8, Msg: "missing !FastSerialization.1 signature"}
		}
		return r.startFastSerialization(true)
	}
	return &FormatError{Offset: 0, Msg: fmt.Sprintf("not a nettrace or netperf stream (starts with % x)", head[:])}
}

// objectHeader is the type part of a FastSerialization object.
type objectHeader struct {
	start      int64
	version    int32
	minVersion int32
	name       string
}

// readObjectHeader reads "BeginObject BeginObject NullReference version
// minVersion name EndObject" after the first tag byte was consumed.
func (r *Reader) readObjectHeader(start int64) (objectHeader, error) {
	s := r.src
	h := objectHeader{start: start}
	var b [14]byte
	if err := s.readFull(b[:]); err != nil {
		return h, r.eofAs(err, start, "object header")
	}
	if b[0] != tagBeginPrivateObject && b[0] != tagBeginObject {
		return h, &FormatError{Offset: start + 1, Msg: fmt.Sprintf("expected type object tag, found 0x%02x", b[0])}
	}
	if b[1] != tagNullReference {
		return h, &FormatError{Offset: start + 2, Msg: fmt.Sprintf("expected null type-of-type tag, found 0x%02x", b[1])}
	}
	h.version = int32(le32(b[2:]))
	h.minVersion = int32(le32(b[6:]))
	nameLen := le32(b[10:])
	if nameLen > 256 {
		return h, &FormatError{Offset: start + 11, Msg: fmt.Sprintf("implausible type name length %d", nameLen)}
	}
	name := make([]byte, nameLen)
	if err := s.readFull(name); err != nil {
		return h, r.eofAs(err, start, "object header")
	}
	h.name = string(name)
	end, err := s.readByte()
	if err != nil {
		return h, r.eofAs(err, start, "object header")
	}
	if end != tagEndObject {
		return h, &FormatError{Offset: s.off - 1, Msg: fmt.Sprintf("expected end of type object, found 0x%02x", end)}
	}
	return h, nil
}

const (
	tagNullReference      = 0x01
	tagBeginObject        = 0x04
	tagBeginPrivateObject = 0x05
	tagEndObject          = 0x06
)

func (r *Reader) eofAs(err error, start int64, what string) error {
	if isEOF(err) {
		return &TruncatedError{Offset: start, What: what}
	}
	return err
}

func (r *Reader) startFastSerialization(netperf bool) error {
	s := r.src
	start := s.off
	tag, err := s.readByte()
	if err != nil {
		return r.eofAs(err, start, "trace object")
	}
	if tag != tagBeginPrivateObject && tag != tagBeginObject {
		return &FormatError{Offset: start, Msg: fmt.Sprintf("expected trace object, found tag 0x%02x", tag)}
	}
	oh, err := r.readObjectHeader(start)
	if err != nil {
		return err
	}
	switch {
	case oh.name == "Microsoft.DotNet.Runtime.EventPipeFile":
		return &UnsupportedVersionError{Found: fmt.Sprintf("NetPerf V%d (pre-release EventPipeFile, minimum reader version %d)", oh.version, oh.minVersion)}
	case oh.name != "Trace":
		if !netperf && (oh.name == "MetadataBlock" || oh.name == "EventBlock" || oh.name == "StackBlock" || oh.name == "SPBlock") {
			// Some tools write blocks without a Trace object: read on with
			// an assumed 64-bit header and say so.
			r.hdr.FormatVersion = FormatNetTraceV4
			r.hdr.PointerSize = 8
			r.hdr.QPCFrequency = 1_000_000_000
			r.stats.NoTraceObject = true
			r.parse = r.parseV4Object
			return r.v4Body(oh, start)
		}
		return &FormatError{Offset: start, Msg: fmt.Sprintf("expected Trace object, found %q", oh.name)}
	}
	switch {
	case netperf && oh.version == 3:
		r.hdr.FormatVersion = FormatNetPerfV3
	case netperf:
		return &UnsupportedVersionError{Found: fmt.Sprintf("NetPerf V%d", oh.version)}
	case oh.version == 4 || (oh.version == 5 && oh.minVersion <= 4):
		r.hdr.FormatVersion = FormatNetTraceV4
	default:
		return &UnsupportedVersionError{Found: fmt.Sprintf("NetTrace Trace object version %d (minimum reader version %d)", oh.version, oh.minVersion)}
	}
	var body [48]byte
	if err := s.readFull(body[:]); err != nil {
		return r.eofAs(err, start, "trace object")
	}
	if err := r.setHeaderV4(body[:]); err != nil {
		return err
	}
	end, err := s.readByte()
	if err != nil {
		return r.eofAs(err, start, "trace object")
	}
	if end != tagEndObject {
		return &FormatError{Offset: s.off - 1, Msg: fmt.Sprintf("expected end of Trace object, found 0x%02x", end)}
	}
	r.stats.Blocks["Trace"]++
	if netperf {
		r.parse = r.parseNetPerfObject
	} else {
		r.parse = r.parseV4Object
	}
	return nil
}

func (r *Reader) setHeaderV4(b []byte) error {
	t, err := systemTime(b[0:16])
	if err != nil {
		return &FormatError{Offset: r.src.off - 48, Msg: err.Error()}
	}
	r.hdr.SyncTimeUTC = t
	r.hdr.SyncTimeQPC = int64(le64(b[16:]))
	r.hdr.QPCFrequency = int64(le64(b[24:]))
	r.hdr.PointerSize = int(int32(le32(b[32:])))
	r.hdr.ProcessID = int(int32(le32(b[36:])))
	r.hdr.NumberOfProcessors = int(int32(le32(b[40:])))
	r.hdr.ExpectedCPUSamplingRate = int(int32(le32(b[44:])))
	return r.checkHeader()
}

func (r *Reader) checkHeader() error {
	if r.hdr.PointerSize != 4 && r.hdr.PointerSize != 8 {
		return &FormatError{Offset: r.src.off, Msg: fmt.Sprintf("pointer size %d (expected 4 or 8)", r.hdr.PointerSize)}
	}
	if r.hdr.QPCFrequency <= 0 {
		return &FormatError{Offset: r.src.off, Msg: fmt.Sprintf("timestamp frequency %d is not positive", r.hdr.QPCFrequency)}
	}
	return nil
}

// parseV4Object reads the next FastSerialization object of a V4 stream.
func (r *Reader) parseV4Object() error {
	s := r.src
	start := s.off
	tag, err := s.readByte()
	if err != nil {
		return r.eofAs(err, start, "next object (no end-of-stream tag)")
	}
	if tag == tagNullReference {
		return io.EOF
	}
	if tag != tagBeginPrivateObject {
		return &FormatError{Offset: start, Msg: fmt.Sprintf("expected object or end tag, found 0x%02x", tag)}
	}
	oh, err := r.readObjectHeader(start)
	if err != nil {
		return err
	}
	return r.v4Body(oh, start)
}

// objectBody reads a block object's body after its type: size, padding to
// 4-byte absolute alignment, content, end tag. When the input ends inside
// the content, b holds the bytes that exist and cut says so.
func (r *Reader) objectBody(oh objectHeader, start int64) (b *blockBuf, cut *TruncatedError, err error) {
	s := r.src
	size, err := s.u32()
	if err != nil {
		return nil, nil, r.eofAs(err, start, oh.name)
	}
	if size > maxBlockSize {
		return nil, nil, &FormatError{Offset: s.off - 4, Msg: fmt.Sprintf("%q size %d exceeds %d", oh.name, size, maxBlockSize)}
	}
	if pad := int((4 - s.off%4) % 4); pad > 0 {
		if err := s.skip(pad); err != nil {
			return nil, nil, r.eofAs(err, start, oh.name)
		}
	}
	b = r.getBuf()
	b.data, err = s.readBlock(b.data, int(size))
	if err == nil {
		var end byte
		if end, err = s.readByte(); err == nil && end != tagEndObject {
			r.putBuf(b)
			return nil, nil, &FormatError{Offset: s.off - 1, Msg: fmt.Sprintf("expected end of %q object, found 0x%02x", oh.name, end)}
		}
	}
	if err != nil {
		if isEOF(err) {
			return b, &TruncatedError{Offset: start, What: oh.name}, nil
		}
		r.putBuf(b)
		return nil, nil, err
	}
	r.stats.Blocks[oh.name]++
	return b, nil, nil
}

// v4Body reads and processes the body of a V4 block object whose type was
// just read.
func (r *Reader) v4Body(oh objectHeader, start int64) error {
	b, cut, err := r.objectBody(oh, start)
	if err != nil {
		return err
	}
	if cut != nil {
		if oh.name == "EventBlock" {
			// Deliver the complete events of the cut block, then report.
			r.stats.Blocks[oh.name]++
			r.blkTrunc = cut
			return r.beginEventBlock(b, start)
		}
		r.putBuf(b)
		return cut
	}
	switch oh.name {
	case "EventBlock":
		return r.beginEventBlock(b, start)
	case "MetadataBlock":
		err = r.metadataBlockV4(b.data, start)
	case "StackBlock":
		err = r.stackBlock(b.data, start)
	case "SPBlock":
		err = r.spBlockV4(b.data, start)
	default:
		// A block of an unknown kind has a size, so it can be skipped.
	}
	r.putBuf(b)
	return err
}

// Next returns the next event in timestamp order. The Event and the memory
// it points to are reused by the following call.
func (r *Reader) Next() (*Event, error) {
	if r.emitted != nil {
		r.release(r.emitted)
		r.emitted = nil
	}
	for {
		for _, q := range r.fresh {
			r.heap.add(q)
		}
		r.fresh = r.fresh[:0]
		// Queued events older than the current limit go first.
		if r.heap.len() > 0 {
			q := r.heap.q[0]
			if r.flushAll || r.forced || q.front().ts < r.limit {
				rc := q.pop()
				r.queued--
				r.deliver(rc)
				r.heap.fix(q)
				return &r.ev, nil
			}
		} else {
			r.forced = false
		}
		if r.hasSorted {
			r.hasSorted = false
			r.limit = math.MinInt64
			r.deliver(&r.sorted)
			return &r.ev, nil
		}
		if r.pendingSP != nil {
			r.applySP()
			continue
		}
		if r.done {
			return nil, r.endErr
		}
		if r.blk != nil {
			if err := r.blockNext(); err != nil {
				r.finish(err)
			}
			continue
		}
		if err := r.parse(); err != nil {
			r.finish(err)
		}
	}
}

// finish ends the stream: queued events are still delivered, then err.
func (r *Reader) finish(err error) {
	if r.blk != nil {
		r.release(r.blk)
		r.blk = nil
	}
	r.done = true
	r.endErr = err
	r.flushAll = true
	if t, ok := err.(*TruncatedError); ok {
		r.stats.Truncated = true
		r.stats.TruncatedAt = t.Offset
	}
}

// deliver fills r.ev from a queued record.
func (r *Reader) deliver(rc *rec) {
	ev := &r.ev
	ev.Meta = rc.meta
	ev.Timestamp = rc.ts
	ev.ThreadID = rc.thread
	ev.CaptureThreadID = rc.capture
	ev.ProcessorNumber = rc.proc
	ev.SequenceNumber = rc.seq
	ev.StackID = rc.stackID
	ev.ActivityID = rc.activity
	ev.RelatedActivityID = rc.related
	ev.IsSorted = rc.sorted
	ev.LostBefore = rc.lost
	ev.Payload = rc.buf.data[rc.payOff : rc.payOff+rc.payLen : rc.payOff+rc.payLen]
	if rc.inlineStack {
		ev.Stack = r.v3stacks[rc.stOff : rc.stOff+rc.stLen : rc.stOff+rc.stLen]
	} else {
		ev.Stack = r.stacks.get(rc.stackID)
	}
	r.stats.Events++
	if len(ev.Stack) > 0 {
		r.stats.EventsWithStack++
	}
	r.emitted = rc.buf
}

// blockBuf holds the bytes of one block while events still point into it.
type blockBuf struct {
	data []byte
	refs int
}

func (r *Reader) getBuf() *blockBuf {
	if n := len(r.pool); n > 0 {
		b := r.pool[n-1]
		r.pool = r.pool[:n-1]
		b.refs = 1
		return b
	}
	return &blockBuf{refs: 1}
}

func (r *Reader) putBuf(b *blockBuf) {
	b.refs = 0
	if cap(b.data) > 32<<20 {
		b.data = nil // do not pin a huge buffer
	}
	r.pool = append(r.pool, b)
}

func (r *Reader) release(b *blockBuf) {
	b.refs--
	if b.refs == 0 {
		r.putBuf(b)
	}
}

// maxQueued caps the events held for sorting. Runtime streams stay far
// below it (a sequence point every ~10 MB); a stream without sort flags or
// sequence points would otherwise grow without bound.
const maxQueued = 1 << 19

// enqueue returns a new slot in q for an unsorted event; the caller fills
// it before anything else touches the queues.
func (r *Reader) enqueue(q *threadQueue) *rec {
	if q.empty() {
		// The heap orders queues by their front record, which is not
		// filled yet: Next adds the queue before it next looks.
		r.fresh = append(r.fresh, q)
	}
	r.queued++
	if r.queued > maxQueued && !r.forced {
		r.forced = true
		r.stats.ForcedFlushes++
	}
	return q.slot()
}

// applySP applies a sequence point once every earlier event went out:
// lost-event checks against the writer's per-thread counts, and the stack
// cache reset (stack ids restart after a sequence point).
func (r *Reader) applySP() {
	sp := r.pendingSP
	r.pendingSP = nil
	r.flushAll = false
	r.limit = math.MinInt64
	r.stacks.reset()
	for _, t := range sp.threads {
		q := r.thread(t.capture)
		if q.seqInit && q.lastSeq != 0 {
			if d := int32(t.seq - q.lastSeq); d > 0 {
				r.stats.LostEvents += uint64(d)
				q.pendingLost += uint32(d)
			}
		}
		q.lastSeq = t.seq
		q.seqInit = true
	}
}

func (r *Reader) thread(capture uint64) *threadQueue {
	if q := r.lastThread; q != nil && q.id == capture {
		return q
	}
	q := r.threads[capture]
	if q == nil {
		q = &threadQueue{id: capture, heapIdx: -1}
		r.threads[capture] = q
	}
	r.lastThread = q
	return q
}

func (r *Reader) metadata(id uint32) *Metadata {
	if int(id) < len(r.metas) {
		return r.metas[id]
	}
	return r.metaMap[id]
}

func (r *Reader) defineMetadata(m *Metadata) {
	r.stats.Metadata++
	m.Runtime = classifyProvider(m.Provider)
	m.Name = displayName(m)
	if m.ID < 1<<16 {
		for int(m.ID) >= len(r.metas) {
			r.metas = append(r.metas, nil)
		}
		r.metas[m.ID] = m
		return
	}
	if r.metaMap == nil {
		r.metaMap = make(map[uint32]*Metadata)
	}
	r.metaMap[m.ID] = m
}
