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
	// PeakQueueBytes is the most memory the sort queues held at once:
	// what bounds the reader's memory besides the blocks in flight.
	PeakQueueBytes int64
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
	src    *source
	hdr    Header
	stats  Stats
	parse  func() error // reads and processes the next object/block
	done   bool         // end of stream reached (clean or not)
	endErr error        // io.EOF or the error that ended the stream

	metas   []*Metadata // by id; ids are small and dense
	metaMap map[uint32]*Metadata

	stacks stackCache

	threads    map[uint64]*threadQueue
	lastThread *threadQueue
	active     []*threadQueue // queues that may hold events
	mtree      []node         // merge scratch: the tournament tree
	mwin       []node         // merge scratch: winners while building it
	order      uint64         // tie-breaker: file order

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
	chunks    int             // queue chunks holding events (the sort queue's size)
	ready     []*rec          // events in delivery order, from r.rpos on
	rpos      int
	free      *chunk // queue chunks not in use
	sorted    rec    // a sorted event waiting for older queued events
	hasSorted bool
	pendingSP *spState

	inflight []*blockBuf // event blocks with events not yet delivered
	pool     []*blockBuf

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
	rd := &Reader{}
	if err := rd.Reset(r); err != nil {
		return nil, err
	}
	return rd, nil
}

// Reset makes the Reader read a new stream, keeping the memory it grew for
// the previous one (queues, block buffers, tables), as bufio.Reader.Reset
// does: reading many traces, or one repeatedly, then allocates almost
// nothing. Events, metadata and stacks of the previous stream must no
// longer be used. The error is NewReader's.
func (r *Reader) Reset(src io.Reader) error {
	if r.src == nil {
		r.src = newSource(src)
	} else {
		r.src.br.Reset(src)
		r.src.off = 0
	}
	for _, b := range r.inflight {
		r.putBuf(b)
	}
	// Queue chunks stay on the free list for the next stream.
	for _, q := range r.threads {
		r.releaseQueue(q)
	}
	if r.threads == nil {
		r.threads = make(map[uint64]*threadQueue)
	} else {
		clear(r.threads)
	}
	blocks := r.stats.Blocks
	if blocks == nil {
		blocks = make(map[string]int)
	} else {
		clear(blocks)
	}
	clear(r.metas)
	*r = Reader{
		src:      r.src,
		stats:    Stats{Blocks: blocks},
		metas:    r.metas[:0],
		stacks:   r.stacks,
		threads:  r.threads,
		active:   r.active[:0],
		mtree:    r.mtree,
		mwin:     r.mwin,
		ready:    r.ready[:0],
		free:     r.free,
		limit:    math.MinInt64,
		pool:     r.pool,
		inflight: r.inflight[:0],
		v3stacks: r.v3stacks[:0],
	}
	r.stacks.reset()
	return r.start()
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
	tagNullReference      = 0x01 // also ends a V3/V4 stream
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
	for {
		if r.rpos < len(r.ready) {
			rc := r.ready[r.rpos]
			r.rpos++
			r.stats.Events++
			if len(rc.Stack) > 0 {
				r.stats.EventsWithStack++
			}
			return &rc.Event, nil
		}
		r.ready, r.rpos = r.ready[:0], 0
		r.freeDelivered()
		if r.pendingSP != nil {
			r.applySP()
		}
		if r.done {
			return nil, r.endErr
		}
		var err error
		if r.blk != nil {
			err = r.decodeEvents(r.v6 != nil)
		} else {
			err = r.parse()
		}
		if err != nil {
			r.finish(err)
		}
		r.collect()
	}
}

// finish ends the stream: queued events are still delivered, then err.
func (r *Reader) finish(err error) {
	if r.blk != nil {
		r.retire()
	}
	r.done = true
	r.endErr = err
	r.flushAll = true
	if t, ok := err.(*TruncatedError); ok {
		r.stats.Truncated = true
		r.stats.TruncatedAt = t.Offset
	}
}

// blockBuf holds the bytes of one block while events still point into it.
// Event blocks stay in Reader.inflight, in file order, until every event
// they hold was delivered: rather than count references per event, the
// Reader frees the blocks whose last event sorts (in file order) before
// every event still queued, once per batch of deliveries.
type blockBuf struct {
	data []byte
	done bool   // fully decoded
	last uint64 // file order of its last event, once done
}

func (r *Reader) getBuf() *blockBuf {
	if n := len(r.pool); n > 0 {
		b := r.pool[n-1]
		r.pool = r.pool[:n-1]
		b.done, b.last = false, 0
		return b
	}
	return &blockBuf{}
}

func (r *Reader) putBuf(b *blockBuf) {
	if cap(b.data) > 32<<20 {
		b.data = nil // do not pin a huge buffer
	}
	r.pool = append(r.pool, b)
}

// retire marks the current event block as fully decoded.
func (r *Reader) retire() {
	r.blk.done = true
	r.blk.last = r.order
	r.blk = nil
}

// freeDelivered returns to the pool the event blocks none of whose events
// is still queued. Called when every collected event was delivered (the
// consumer is done with the last one: its Next call is under way).
func (r *Reader) freeDelivered() {
	if len(r.inflight) == 0 {
		return
	}
	pending := uint64(math.MaxUint64) // smallest file order still queued
	for _, q := range r.active {
		if !q.empty() {
			pending = min(pending, q.front().order)
		}
	}
	if r.hasSorted {
		pending = min(pending, r.sorted.order)
	}
	n := 0
	for _, b := range r.inflight {
		if !b.done || b.last >= pending {
			break
		}
		r.putBuf(b)
		n++
	}
	if n > 0 {
		r.inflight = append(r.inflight[:0], r.inflight[n:]...)
	}
}

// maxChunks caps the events held for sorting (in chunks of chunkRecs:
// 4,096 chunks, 512 k events, 78 MB). Runtime streams stay far below it (a
// sequence point every ~10 MB); a stream without sort flags or sequence
// points would otherwise grow without bound.
var maxChunks = 1 << 19 / chunkRecs // a variable for tests

// enqueue returns a new slot in q for an unsorted event; the caller fills
// it (every field: slots are reused) before anything else touches the
// queues. The common case is small enough to inline into the decoder:
// q.lim is where the rare work is due (a new chunk, or listing q).
func (r *Reader) enqueue(q *threadQueue) *rec {
	if q.ti == q.lim {
		r.enqueueRare(q)
	}
	rc := &q.tail.recs[q.ti]
	q.ti++
	return rc
}

// enqueueRare lists q among the active queues and gives it a new chunk, as
// needed, and checks the cap on the sort queue's size.
func (r *Reader) enqueueRare(q *threadQueue) {
	if !q.listed {
		q.listed = true
		r.active = append(r.active, q)
	}
	if q.ti == chunkRecs || q.tail == nil {
		r.addChunk(q)
		if b := int64(r.chunks) * chunkBytes; b > r.stats.PeakQueueBytes {
			r.stats.PeakQueueBytes = b
		}
	}
	q.lim = chunkRecs
	if r.chunks > maxChunks && !r.forced {
		r.forced = true
		r.stats.ForcedFlushes++
	}
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
		q = &threadQueue{id: capture}
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
