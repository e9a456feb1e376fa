package nettrace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"
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
	// StacksEvicted counts stacks the bounded stack cache dropped
	// (Options.StackCacheBytes) before a sequence point would have; never
	// happens with runtime-written streams.
	StacksEvicted uint64
	// UnresolvedStacks counts delivered events whose stack id named no
	// stack the reader holds (evicted, or never defined): their StackID is
	// set and their Stack empty.
	UnresolvedStacks uint64
	// Skipped counts the events Options.Keep rejected that were not
	// delivered; Events+Skipped is every event read. EventsWithStack and
	// UnresolvedStacks count only the events Keep kept.
	Skipped uint64
	// AllWithStack and AllUnresolved are EventsWithStack and
	// UnresolvedStacks over every event read, kept by Options.Keep or not.
	AllWithStack, AllUnresolved uint64
}

// EffectiveVersion is the version the catalog of real traces uses: the
// container version, with 5 for a V4 container that carried V5 tags.
func (s *Stats) effective(container int) int {
	if container == FormatNetTraceV4 && s.V5Tags {
		return 5
	}
	return container
}

// Options configures a Reader.
type Options struct {
	// Threads is how many cores the reader may keep busy. With 0 or 1
	// everything happens inside Next, on the caller's goroutine (what a
	// live session wants: no event waits in a pipeline). With more, one
	// goroutine reads blocks ahead and Threads goroutines decode event
	// blocks in parallel while Next merges and delivers: the events, their
	// order, the counts, lost events and truncation are exactly those of a
	// one-goroutine read. Such a Reader must be read to its end, or
	// stopped with Close or Reset, to end its goroutines.
	Threads int
	// StackCacheBytes bounds the memory of stacks held between two
	// sequence points; 0 means DefaultStackCacheBytes.
	StackCacheBytes int64
	// Keep, when set, says which events the caller uses; it is asked once
	// per metadata record. Events it rejects are still read, checked and
	// counted (Stats.Skipped), but of each run of one capture thread's
	// consecutive rejected events in a block only the first and the last
	// are delivered. What every event carries for the stream as a whole
	// therefore arrives unchanged: the first and last timestamps (each
	// thread's timestamps increase, as the runtime writes them) and every
	// LostBefore (a run never spans a sequence gap). An analysis that
	// ignores the rejected events, but for their clock and lost counts,
	// gets the result it gets from the whole stream, with less work for
	// the reader's merge and for the caller. Every event is still counted
	// per metadata record (Reader.Summarize, Stats.AllWithStack): a caller
	// that needs only the counts rejects every event. NetPerf (V3) streams
	// are not filtered.
	Keep func(*Metadata) bool
}

// Reader decodes one trace stream. Create it with NewReader, then call Next
// until it returns an error: io.EOF at a clean end, a *TruncatedError (after
// every complete event was delivered) when the stream was cut, or another
// error for corrupt or unsupported input.
//
// Inside, three roles hand work on in stream order: the framer reads
// objects and blocks, keeps the tables (metadata, stacks, V6 threads and
// labels) and emits items (event blocks, sequence points, the end); the
// decoder turns an event block into records in file order (recChunk); the
// consumer (Next) keeps per-thread sequence numbers, queues the records by
// capture thread, merges them in timestamp order and delivers them. With
// Options.Threads > 1 the framer and the decoders run on goroutines of their
// own (pipeline.go); the fields below are grouped by the role that owns
// them.
type Reader struct {
	opt Options
	hdr Header // set before any goroutine starts, read-only after

	// Framer.
	src     *source
	parse   func() error // reads and processes the next object/block
	metas   []*Metadata  // by id; ids are small and dense
	metaMap map[uint32]*Metadata
	stacks  stackCache
	v6      *v6State  // NetTrace V6 tables (threads, label lists); nil otherwise
	fc      counts    // counters since the last emitted item
	pend    []item    // items emitted, not yet taken (one goroutine)
	lastBlk *blockBuf // the last event block emitted
	blkSeq  uint64    // event blocks emitted
	nameBuf [256]byte // an object's type name being read

	// Consumer.
	stats      Stats  // Events counts the batches delivered before ready
	statsOut   Stats  // what Stats returns
	cnt        counts // the framer's counters, as of the last item taken
	done       bool   // end of stream reached (clean or not)
	endErr     error  // io.EOF or the error that ended the stream
	threads    map[uint64]*threadQueue
	lastThread *threadQueue
	active     []*threadQueue // queues that may hold events
	mtree      []node         // merge scratch: the tournament tree
	mwin       []node         // merge scratch: winners while building it
	mqs        []*threadQueue // merge scratch: its leaves
	cur        *blockBuf      // event block being consumed
	chunk      *recChunk      // its chunk being consumed
	ci         int            // next segment of chunk
	ri         int32          // next record of segment ci, when a drain split it; -1 otherwise
	limit      int64          // queued events below this timestamp may go out
	flushAll   bool           // every queued event may go out (sequence point, end)
	forced     bool           // the queue cap was hit: drain before reading on
	chunks     int            // queue chunks holding events (the sort queue's size)
	ready      []*rec         // events in delivery order, from r.rpos on
	rpos       int
	sorted     *rec // a sorted event waiting for older queued events
	pendingSP  *spState
	inflight   []*blockBuf             // event blocks with events not yet delivered
	inchunks   []*recChunk             // their record chunks, in file order
	freedAt    uint64                  // Events when freeDelivered last looked
	counted    []*Metadata             // records with events read (Summarize)
	qfree      map[uint64]*threadQueue // the previous streams' queues by thread (Reset), with their run lists

	// Shared by the roles: pools and the pipeline (nil with one goroutine).
	mu      sync.Mutex
	pool    []*blockBuf
	rfree   *recChunk
	genPool []*stackGen
	slabs   slabPool
	pipe    *pipeline
}

// spState is a sequence point to apply once queued events drained.
type spState struct {
	threads []spThread
}

type spThread struct {
	capture uint64
	seq     uint32
}

// NewReader reads the stream header and trace object, for reading on the
// caller's goroutine only (Options{}). The returned error is an
// *UnsupportedVersionError for formats outside V3–V6, a *FormatError or
// *TruncatedError for bad input.
func NewReader(r io.Reader) (*Reader, error) {
	return NewReaderOptions(r, Options{})
}

// NewReaderOptions is NewReader with options (Options.Threads > 1 for
// files: decoding in parallel with the caller's work).
func NewReaderOptions(r io.Reader, opt Options) (*Reader, error) {
	rd := &Reader{opt: opt}
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
	r.Close()
	if r.src == nil {
		r.src = newSource(src)
	} else {
		r.src.br.Reset(src)
		r.src.off = 0
	}
	for _, b := range r.inflight {
		r.putBuf(b)
	}
	r.putChunks(r.inchunks)
	if r.chunk != nil {
		r.putChunks([]*recChunk{r.chunk})
	}
	for _, it := range r.pend {
		if it.b != nil && it.b != r.cur {
			r.putBuf(it.b)
		}
	}
	// Queue chunks stay on the free list for the next stream, and the
	// queues (with their run lists) for its threads.
	qfree := r.qfree
	if qfree == nil {
		qfree = make(map[uint64]*threadQueue)
	}
	for id, q := range r.threads {
		r.releaseQueue(q)
		*q = threadQueue{runs: q.runs[:0]}
		qfree[id] = q
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
	if r.stacks.young != nil {
		r.recycleGen(r.stacks.young)
	}
	if r.stacks.old != nil {
		r.recycleGen(r.stacks.old)
	}
	clear(r.metas)
	clear(r.ready)
	clear(r.counted)
	*r = Reader{
		opt:      r.opt,
		src:      r.src,
		stats:    Stats{Blocks: blocks},
		metas:    r.metas[:0],
		threads:  r.threads,
		qfree:    qfree,
		active:   r.active[:0],
		mtree:    r.mtree,
		mwin:     r.mwin,
		mqs:      r.mqs[:0],
		ready:    r.ready[:0],
		limit:    math.MinInt64,
		pool:     r.pool,
		rfree:    r.rfree,
		genPool:  r.genPool,
		slabs:    r.slabs,
		pend:     r.pend[:0],
		inflight: r.inflight[:0],
		inchunks: r.inchunks[:0],
		counted:  r.counted[:0],
	}
	r.stacks.max = r.opt.StackCacheBytes
	if r.stacks.max <= 0 {
		r.stacks.max = DefaultStackCacheBytes
	}
	r.stacks.young = r.newGen()
	r.stacks.gen = 1
	if err := r.start(); err != nil {
		return err
	}
	if r.opt.Threads > 1 {
		r.startPipeline()
	}
	return nil
}

// Close stops the goroutines of a Reader made with Options.Threads > 1
// that was not read to its end (Next also stops them when the stream
// ends). It waits for the read under way to return. Next then reports the
// end. A Reader without goroutines needs no Close. The error is always nil.
func (r *Reader) Close() error {
	if r.pipe != nil {
		r.stopPipeline()
		if !r.done {
			r.done, r.endErr = true, errReaderClosed
			r.stats.Events += uint64(r.rpos)
			r.ready, r.rpos = r.ready[:0], 0
		}
	}
	return nil
}

// Release drops what the Reader grew for reading (block buffers, record
// chunks, the stack cache, the sort queues, the pipeline) once its stream
// has ended, keeping what describes the stream: Header, Stats, Metadata
// and FormatVersion stay as they were. Next then reports the end again;
// Events, metadata and stacks it returned must no longer be used. Called
// before the end, it closes the Reader first (see Close). Reset makes it
// read again, growing its buffers anew. A heap snapshot's graph is built
// after its stream ended: these buffers (16 MB of a 1 M-object dump's
// 44 MB trace) would otherwise stay in its peak.
func (r *Reader) Release() {
	r.Close()
	if !r.done {
		r.done, r.endErr = true, errReaderClosed
	}
	if r.rpos > 0 { // an early Release: the events of the batch under way were delivered
		r.stats.Events += uint64(r.rpos)
	}
	// Queues keep their threads (Stats.CaptureThreads), not their runs.
	for _, q := range r.threads {
		r.releaseQueue(q)
		q.runs = nil
	}
	r.src = nil
	r.stacks.young, r.stacks.old = nil, nil
	r.pend, r.lastBlk, r.cur, r.chunk = nil, nil, nil, nil
	r.active, r.mtree, r.mwin, r.mqs = nil, nil, nil, nil
	r.ready, r.rpos, r.sorted, r.pendingSP = nil, 0, nil, nil
	r.inflight, r.inchunks = nil, nil
	r.mu.Lock()
	r.pool, r.rfree, r.genPool, r.slabs = nil, nil, nil, slabPool{}
	r.mu.Unlock()
}

// errReaderClosed ends a stream whose Reader was closed before its end.
var errReaderClosed = errors.New("nettrace: reader closed")

// Header returns the trace header.
func (r *Reader) Header() *Header { return &r.hdr }

// Stats returns counters about what was read so far. With Options.Threads
// > 1 the counts of blocks, metadata and stacks follow the events Next
// delivered, not the reading ahead.
func (r *Reader) Stats() *Stats {
	c := &r.cnt
	s := &r.stats
	s.Metadata, s.Stacks, s.SequencePoints = c.metadata, c.stacks, c.sps
	s.MaxStackDepth, s.V5Tags, s.StacksEvicted, s.Bytes = c.maxDepth, c.v5tags, c.evicted, c.bytes
	clear(s.Blocks)
	for k, n := range c.blocks {
		if n > 0 {
			s.Blocks[blockKindNames[k]] = n
		}
	}
	for _, o := range c.other {
		s.Blocks[o.name] += o.n
	}
	s.CaptureThreads = len(r.threads)
	r.statsOut = *s
	r.statsOut.Events += uint64(r.rpos) // delivered from the batch under way
	return &r.statsOut
}

// FormatVersion is the container version, reported as 5 for a V4 container
// whose metadata used V5 tags (known for certain only at the end).
func (r *Reader) FormatVersion() int { return r.Stats().effective(r.hdr.FormatVersion) }

// Metadata returns every metadata record defined so far, by id order. With
// Options.Threads > 1, call it once Next returned an error (the framer
// owns the table while it reads ahead).
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
		if !isEOF(err) {
			return err
		}
		// Shorter than any header: a cut trace only when what there is
		// starts like one ("Nettrace", or NetPerf's length 20 and
		// "!Fas"); anything else is not a trace at all.
		n := int(s.off)
		if n > 0 && !isHeaderPrefix(head[:n]) {
			return &FormatError{NotTrace: true, Msg: fmt.Sprintf("%d bytes (% x), not the start of a nettrace or netperf stream", n, head[:n])}
		}
		return &TruncatedError{Offset: 0, What: "stream header"}
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
	return &FormatError{NotTrace: true, Msg: fmt.Sprintf("starts with % x, not a nettrace or netperf stream", head[:])}
}

// isHeaderPrefix: p is the start of a nettrace or a netperf header.
func isHeaderPrefix(p []byte) bool {
	netperf := append([]byte{20, 0, 0, 0}, magicFastSer[:4]...)
	return bytes.HasPrefix(magicNettrace, p) || bytes.HasPrefix(netperf, p)
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
	b := s.tmp[:14]
	if err := s.readFull(b); err != nil {
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
	name := r.nameBuf[:nameLen]
	if err := s.readFull(name); err != nil {
		return h, r.eofAs(err, start, "object header")
	}
	h.name = blockName(name)
	end, err := s.readByte()
	if err != nil {
		return h, r.eofAs(err, start, "object header")
	}
	if end != tagEndObject {
		return h, &FormatError{Offset: s.off - 1, Msg: fmt.Sprintf("expected end of type object, found 0x%02x", end)}
	}
	return h, nil
}

// blockName is name as a string, without allocating for the names blocks
// have (every block of a stream has its type read: the reader's one
// allocation per block otherwise).
func blockName(name []byte) string {
	for _, k := range blockKindNames {
		if string(name) == k {
			return k
		}
	}
	return string(name)
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
	r.fc.block("Trace")
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
	oh, start, err := r.nextObject(false)
	if err != nil {
		return err
	}
	return r.v4Body(oh, start)
}

// nextObject reads the tag and header of the stream's next object and
// says where it starts: io.EOF at the end-of-stream tag. A V4 stream's
// objects are private ones; NetPerf's (public) may be either.
func (r *Reader) nextObject(public bool) (objectHeader, int64, error) {
	s := r.src
	start := s.off
	tag, err := s.readByte()
	if err != nil {
		return objectHeader{}, start, r.eofAs(err, start, "next object (no end-of-stream tag)")
	}
	if tag == tagNullReference {
		return objectHeader{}, start, io.EOF
	}
	if tag != tagBeginPrivateObject && !(public && tag == tagBeginObject) {
		return objectHeader{}, start, &FormatError{Offset: start, Msg: fmt.Sprintf("expected object or end tag, found 0x%02x", tag)}
	}
	oh, err := r.readObjectHeader(start)
	return oh, start, err
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
		return nil, nil, &FormatError{Offset: s.off - 4, Msg: fmt.Sprintf("%q of %d bytes is larger than the %d a block may have", oh.name, size, maxBlockSize)}
	}
	if pad := int((4 - s.off%4) % 4); pad > 0 {
		if err := s.skip(pad); err != nil {
			return nil, nil, r.eofAs(err, start, oh.name)
		}
	}
	if err := r.waitAhead(int64(size)); err != nil {
		return nil, nil, err
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
	r.fc.block(oh.name)
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
			r.fc.block(oh.name)
			return r.emitBlock(b, kindV4, start, cut)
		}
		r.putBuf(b)
		return cut
	}
	switch oh.name {
	case "EventBlock":
		return r.emitBlock(b, kindV4, start, nil)
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
			return &rc.Event, nil
		}
		r.stats.Events += uint64(len(r.ready)) // counted by the batch
		r.ready, r.rpos = r.ready[:0], 0
		r.freeDelivered()
		if r.pendingSP != nil {
			r.applySP()
		}
		if r.done {
			return nil, r.endErr
		}
		if r.cur != nil {
			if err := r.consume(); err != nil {
				r.finish(err)
			}
		} else {
			r.take(r.nextItem())
		}
		r.collect()
	}
}

// item is what the framer hands the consumer, in stream order.
type item struct {
	kind itemKind
	b    *blockBuf // itemBlock
	sp   *spState  // itemSP, itemRemoveThreads
	err  error     // itemEnd: io.EOF or what ended the stream
	fc   counts    // the framer's counters since the previous item
}

type itemKind uint8

const (
	itemBlock itemKind = iota
	itemSP
	itemRemoveThreads // V6: threads whose last sequence numbers are final
	itemEnd
)

// emit hands an item to the consumer, with the counters of what the framer
// read since the previous one (so the consumer's Stats follow what it
// took, not what the framer read ahead).
func (r *Reader) emit(it item) error {
	it.fc = r.fc
	it.fc.bytes = r.src.off
	r.fc = counts{}
	if r.pipe != nil {
		return r.pipe.send(r, it)
	}
	r.pend = append(r.pend, it)
	return nil
}

// nextItem returns the next item: from the pipeline, or by running the
// framer until it emits one.
func (r *Reader) nextItem() item {
	if r.pipe != nil {
		return r.pipe.receive()
	}
	for len(r.pend) == 0 {
		if err := r.parse(); err != nil {
			r.emit(item{kind: itemEnd, err: err})
		}
	}
	it := r.pend[0]
	r.pend[0] = item{}
	r.pend = append(r.pend[:0], r.pend[1:]...)
	return it
}

// take applies an item in the consumer.
func (r *Reader) take(it item) {
	r.cnt.add(&it.fc)
	switch it.kind {
	case itemBlock:
		r.cur, r.chunk, r.ci = it.b, nil, 0
		r.inflight = append(r.inflight, it.b)
	case itemSP:
		r.pendingSP = it.sp
		r.flushAll = true
	case itemRemoveThreads:
		r.removeThreads(it.sp.threads)
	case itemEnd:
		r.finish(it.err)
	}
}

// finish ends the stream: queued events are still delivered, then err.
func (r *Reader) finish(err error) {
	r.done = true
	r.endErr = err
	r.flushAll = true
	if t, ok := err.(*TruncatedError); ok {
		r.stats.Truncated = true
		r.stats.TruncatedAt = t.Offset
	}
	if r.pipe != nil {
		// The framer may have read past an error a decoder found.
		r.stopPipeline()
	}
}

// blockBuf holds the bytes of one event block (or of another block while
// the framer parses it) and, for event blocks, what decoding it needs.
// Event blocks stay in Reader.inflight, in file order, until every event
// they hold was delivered: rather than count references per event, the
// consumer frees the blocks whose last event sorts (in file order) before
// every event still queued, once per batch of deliveries.
type blockBuf struct {
	data []byte

	// Set by the framer when it emits the block: the decoder's input.
	kind    uint8
	start   int64           // stream offset, for errors
	trunc   *TruncatedError // the end of input cut the block
	flags   uint16
	metas   []*Metadata // the metadata table as of this block
	metaMap map[uint32]*Metadata
	stk     [2]stackView // the stack cache as of this block: young, old
	stkGen  uint32       // and its Event.StackGen

	// Decoder state.
	pos      int       // next event
	ord      uint64    // file order of the next record: block number << 32 | index
	prev     rawHeader // previous header (compressed headers are deltas)
	finished bool
	err      error          // what ended decoding early (or the truncation)
	cut      string         // Stats.CutEvent when the cut fell inside an event
	fc       counts         // counters of a V3 block's inline metadata and stacks
	ch       chan *recChunk // decoded chunks, then nil (pipeline)

	// Consumer state.
	done bool   // fully consumed
	last uint64 // file order of its last event, once done

	// Under Reader.mu: stack generations to recycle once the block is
	// freed (no event or decoder can reach them then).
	release []*stackGen
	freed   bool
}

const (
	kindV4 = iota // V4/V5 event block
	kindV6
	kindV3 // NetPerf V3 event block
)

// recChunk holds decoded events in file order: a decoder fills it, the
// consumer queues pointers to its records, and it is freed (like blocks,
// by file order) once every record was delivered.
type recChunk struct {
	recs       [recChunkLen]rec
	n          int
	segs       []seg // recs[:n] by run
	withStack  int   // events with a non-empty stack
	dropped    int   // rejected events (Options.Keep) not recorded
	act        bool  // some record may have non-zero activity ids
	unresolved int   // events whose stack id resolved to nothing
	// Every event of the chunk, kept by Options.Keep or not: per
	// metadata record, and the unresolved stacks among them.
	mcs           []metaCount
	allUnresolved int
	ips           []uint64 // inline stacks (V3)
	last          uint64   // file order of its last record
	next          *recChunk
}

const recChunkLen = 256

// getBuf returns an empty block buffer (framer).
func (r *Reader) getBuf() *blockBuf {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n := len(r.pool); n > 0 {
		b := r.pool[n-1]
		r.pool = r.pool[:n-1]
		b.done, b.last, b.freed = false, 0, false
		if b == r.lastBlk {
			r.lastBlk = nil // freed: no generation needs to wait for it
		}
		return b
	}
	return &blockBuf{}
}

// putBuf returns a block buffer to the pool and recycles the stack
// generations that waited for it.
func (r *Reader) putBuf(b *blockBuf) {
	if cap(b.data) > 32<<20 {
		b.data = nil // do not pin a huge buffer
	}
	b.metas, b.metaMap, b.stk, b.stkGen, b.err, b.trunc = nil, nil, [2]stackView{}, 0, nil, nil
	r.mu.Lock()
	for i, g := range b.release {
		r.recycleGenLocked(g)
		b.release[i] = nil
	}
	b.release = b.release[:0]
	b.freed = true
	r.pool = append(r.pool, b)
	r.mu.Unlock()
}

func (r *Reader) getChunk() *recChunk {
	r.mu.Lock()
	c := r.rfree
	if c != nil {
		r.rfree = c.next
	}
	r.mu.Unlock()
	if c == nil {
		// Sized for the most a chunk can need: growing them would allocate
		// whenever a reused chunk gets more segments than it had.
		return &recChunk{mcs: make([]metaCount, 0, 16), segs: make([]seg, 0, recChunkLen)}
	}
	c.next, c.n, c.withStack, c.unresolved, c.dropped, c.ips, c.segs = nil, 0, 0, 0, 0, c.ips[:0], c.segs[:0]
	clear(c.mcs)
	c.mcs, c.allUnresolved = c.mcs[:0], 0
	if c.act { // the decoder writes activity ids only when a block has some
		for i := range c.recs {
			c.recs[i].ActivityID, c.recs[i].RelatedActivityID = GUID{}, GUID{}
		}
		c.act = false
	}
	return c
}

func (r *Reader) putChunks(cs []*recChunk) {
	if len(cs) == 0 {
		return
	}
	r.mu.Lock()
	for _, c := range cs {
		c.next = r.rfree
		r.rfree = c
	}
	r.mu.Unlock()
}

// newGen returns an empty stack generation (framer).
func (r *Reader) newGen() *stackGen {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n := len(r.genPool); n > 0 {
		g := r.genPool[n-1]
		r.genPool = r.genPool[:n-1]
		return g
	}
	return &stackGen{}
}

// slab returns a slab for the stack cache (framer).
func (r *Reader) slab() []uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.slabs.get()
}

// releaseGen retires a generation the framer no longer adds to or looks up
// in: it is recycled when the last block emitted so far is freed, since
// only that block and earlier ones can hold its stacks.
func (r *Reader) releaseGen(g *stackGen) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if b := r.lastBlk; b != nil && !b.freed {
		b.release = append(b.release, g)
		return
	}
	r.recycleGenLocked(g)
}

func (r *Reader) recycleGen(g *stackGen) {
	r.mu.Lock()
	r.recycleGenLocked(g)
	r.mu.Unlock()
}

// recycleGenLocked keeps two spare generations (a stream with sequence
// points alternates between two) and their slabs up to half the cache's
// budget.
func (r *Reader) recycleGenLocked(g *stackGen) {
	r.slabs.max = int(r.stacks.max / 2 / (slabIPs * 8))
	g.reset(&r.slabs)
	if len(r.genPool) < 2 {
		r.genPool = append(r.genPool, g)
	}
}

// freeDelivered frees the event blocks and record chunks none of whose
// events is still queued. Called when every collected event was delivered
// (the consumer is done with the last one: its Next call is under way).
//
// Finding the oldest queued event looks at every listed queue, so it runs
// once some thousands of events went out (or many blocks wait): a merge
// that delivers a handful of events does not pay a pass over every thread,
// and the memory held a little longer is bounded.
func (r *Reader) freeDelivered() {
	if r.stats.Events-r.freedAt < 4096 && len(r.inflight) < 16 && len(r.inchunks) < 64 {
		return
	}
	r.freedAt = r.stats.Events
	pending := uint64(math.MaxUint64) // smallest file order still queued
	for _, q := range r.active {
		if !q.empty() {
			pending = min(pending, q.front().order)
		}
	}
	if r.sorted != nil {
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
	n = 0
	for _, c := range r.inchunks {
		if c.last >= pending {
			break
		}
		n++
	}
	if n > 0 {
		r.putChunks(r.inchunks[:n])
		r.inchunks = append(r.inchunks[:0], r.inchunks[n:]...)
	}
}

// applySP applies a sequence point once every earlier event went out:
// lost-event checks against the writer's per-thread counts. (The framer
// reset the stack cache when it read the point: stack ids restart.)
func (r *Reader) applySP() {
	sp := r.pendingSP
	r.pendingSP = nil
	r.flushAll = false
	r.limit = math.MinInt64
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

// removeThreads checks each removed V6 thread's final sequence number
// (lost events).
func (r *Reader) removeThreads(ts []spThread) {
	for _, t := range ts {
		q := r.thread(t.capture)
		if q.seqInit {
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
		// The same thread's queue if a previous stream had it (reading
		// a stream again grows nothing), else any.
		if q = r.qfree[capture]; q != nil {
			delete(r.qfree, capture)
		} else {
			for id, fq := range r.qfree {
				q = fq
				delete(r.qfree, id)
				break
			}
			if q == nil {
				q = &threadQueue{}
			}
			q.id = capture
		}
		r.threads[capture] = q
	}
	r.lastThread = q
	return q
}

func (r *Reader) metadata(id uint32) *Metadata { return lookupMeta(r.metas, r.metaMap, id) }

func lookupMeta(metas []*Metadata, metaMap map[uint32]*Metadata, id uint32) *Metadata {
	if int(id) < len(metas) {
		return metas[id]
	}
	return metaMap[id]
}

// defineMetadata adds m to the framer's table (no decoder may be reading
// it: see drain), counting it in fc.
func (r *Reader) defineMetadata(m *Metadata, fc *counts) {
	fc.metadata++
	m.Runtime = classifyProvider(m.Provider)
	m.Name = displayName(m)
	m.skip = r.opt.Keep != nil && !r.opt.Keep(m)
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

// counts are the framer's counters. They reach Stats through the items,
// in stream order, so that a stream ending early (a decoder's error) counts
// what a one-goroutine read would have read, however far the framer got.
type counts struct {
	blocks   [len(blockKindNames)]int
	other    []blockCount // objects of other kinds (rare)
	metadata int
	stacks   int
	sps      int
	maxDepth int
	v5tags   bool
	evicted  uint64
	bytes    int64 // stream offset reached (not a delta)
}

type blockCount struct {
	name string
	n    int
}

var blockKindNames = [...]string{"Trace", "EventBlock", "MetadataBlock", "StackBlock", "SPBlock",
	"EndOfStream", "ThreadBlock", "RemoveThreadBlock", "LabelListBlock"}

func (c *counts) block(name string) { c.blockN(name, 1) }

func (c *counts) blockN(name string, n int) {
	for i, k := range blockKindNames {
		if k == name {
			c.blocks[i] += n
			return
		}
	}
	for i := range c.other {
		if c.other[i].name == name {
			c.other[i].n += n
			return
		}
	}
	c.other = append(c.other, blockCount{name, n})
}

// add adds the counters d of a later item.
func (c *counts) add(d *counts) {
	for i, n := range d.blocks {
		c.blocks[i] += n
	}
	for _, o := range d.other {
		c.blockN(o.name, o.n)
	}
	c.metadata += d.metadata
	c.stacks += d.stacks
	c.sps += d.sps
	c.maxDepth = max(c.maxDepth, d.maxDepth)
	c.v5tags = c.v5tags || d.v5tags
	c.evicted += d.evicted
	c.bytes = max(c.bytes, d.bytes)
}
