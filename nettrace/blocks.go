package nettrace

import (
	"fmt"
	"math"
	"time"
	"unsafe"
)

// rec is one event as Next will return it, built in place by a decoder
// (in a recChunk) so that delivery copies nothing, plus its file order (the
// tie-breaker for equal timestamps; see also blockBuf) and the capture
// thread key its queue and sequence numbers go by.
type rec struct {
	order uint64
	Event
	key uint64 // capture thread id (V4) or index (V6); ^0 for V3
}

// seg is a stretch of a recChunk the consumer handles at once: a run of
// one capture thread's delivered events (the runtime writes each thread's
// events together), or a single sorted event, or a single event whose
// metadata is unknown (counted, not delivered).
type seg struct {
	start int32 // it ends where the next one starts
	kind  uint8
}

// Event.run values.
const (
	runHead = 1 + iota
	runTail
)

const (
	segRun     = iota
	segRunGaps // a run whose sequence numbers do not follow each other
	segSorted
	segUnknown
)

// threadQueue holds the not-yet-delivered events of one capture thread, in
// timestamp order (the writer guarantees per-thread order), as runs of
// records in the decoders' chunks: queueing a run costs one entry, not
// one per event.
type threadQueue struct {
	id          uint64
	lastSeq     uint32
	seqInit     bool
	pendingLost uint32
	runs        []run // runs[rh:] are queued
	rh          int
	// n events are queued; vh is where the first of them would sit in a
	// chunk of chunkRecs if the queue were made of such chunks, as it once
	// was: the queue cap is counted in those chunks, so it drains at the
	// same events as it always did.
	n, vh  int
	fts    int64 // the first queued event's timestamp (when n > 0)
	listed bool  // in Reader.active
}

// run is records c.recs[i:j] of one thread.
type run struct {
	c    *recChunk
	i, j int32
}

// chunkRecs is the size of the (notional) chunks the queue cap counts;
// chunkBytes what such a chunk of records costs.
const (
	chunkRecs  = 128
	chunkBytes = int64(chunkRecs * (unsafe.Sizeof(rec{}) + 8))
)

// maxChunks caps the events held for sorting (in chunks of chunkRecs:
// 4,096 chunks, 512 k events, 82 MB). Runtime streams stay far below it (a
// sequence point every ~10 MB); a stream without sort flags or sequence
// points would otherwise grow without bound.
var maxChunks = 1 << 19 / chunkRecs // a variable for tests

func (q *threadQueue) empty() bool { return q.n == 0 }
func (q *threadQueue) front() *rec { ru := &q.runs[q.rh]; return &ru.c.recs[ru.i] }

// chunksHeld is how many chunks q would hold.
func (q *threadQueue) chunksHeld() int {
	if q.n == 0 {
		return 0
	}
	return (q.vh + q.n + chunkRecs - 1) / chunkRecs
}

// releaseQueue forgets every queued event of q.
func (r *Reader) releaseQueue(q *threadQueue) {
	r.chunks -= q.chunksHeld()
	clear(q.runs)
	q.runs, q.rh, q.n, q.vh = q.runs[:0], 0, 0, 0
}

// enqueueRun queues records c.recs[i:j] on q. When the queue cap is hit,
// it stops after the event that went over (as queueing one event at a time
// did) and returns how many it queued; the caller drains before the rest.
func (r *Reader) enqueueRun(q *threadQueue, c *recChunk, i, j int32) int32 {
	if !q.listed {
		q.listed = true
		r.active = append(r.active, q)
	}
	m := int(j - i)
	if q.n == 0 {
		q.vh = 0
		q.fts = c.recs[i].Timestamp
	}
	// Chunks start at multiples of chunkRecs from the head's position.
	p0 := q.vh + q.n
	before := q.chunksHeld()
	after := (p0 + m + chunkRecs - 1) / chunkRecs
	if r.chunks+after-before > maxChunks {
		// The k-th new chunk, at position first+(k-1)*chunkRecs, is the
		// one that goes over: queue up to the event that takes it.
		first := (p0 + chunkRecs - 1) / chunkRecs * chunkRecs
		k := maxChunks - r.chunks + 1
		m = first + (k-1)*chunkRecs - p0 + 1
		after = (p0 + m + chunkRecs - 1) / chunkRecs
		r.forced = true
		r.stats.ForcedFlushes++
	}
	if q.rh > 0 && q.rh == len(q.runs) {
		q.runs, q.rh = q.runs[:0], 0
	} else if q.rh > 32 && q.rh*2 > len(q.runs) {
		n := copy(q.runs, q.runs[q.rh:])
		clear(q.runs[n:])
		q.runs, q.rh = q.runs[:n], 0
	}
	q.runs = append(q.runs, run{c, i, i + int32(m)})
	q.n += m
	r.chunks += after - before
	if b := int64(r.chunks) * chunkBytes; b > r.stats.PeakQueueBytes {
		r.stats.PeakQueueBytes = b
	}
	return int32(m)
}

// collect moves the events that may go out now into r.ready, in order:
// every queued event when a sequence point, the end of the stream or the
// queue cap says so, else those older than the held sorted event; then the
// sorted event itself.
func (r *Reader) collect() {
	all := r.flushAll || r.forced
	if all || r.sorted != nil {
		r.merge(all, r.limit)
	}
	r.forced = false
	if r.sorted != nil {
		r.ready = append(r.ready, r.sorted)
		r.sorted = nil
		r.limit = math.MinInt64
	}
}

// sortKey orders events: timestamp, then file order.
type sortKey struct {
	ts    int64
	order uint64
}

// noKey sorts after every event: an exhausted queue.
var noKey = sortKey{math.MaxInt64, math.MaxUint64}

func (rc *rec) skey() sortKey { return sortKey{rc.Timestamp, rc.order} }

func (a sortKey) before(b sortKey) bool {
	return a.ts < b.ts || (a.ts == b.ts && a.order < b.order)
}

// merge appends queued events to r.ready in (timestamp, file order) order:
// all of them, or those before limit. It runs a tournament (loser) tree
// over the non-empty queues: taking an event and replaying its queue's new
// front costs one comparison per level, log2 of the number of queues.
// When a replay leaves the same queue winning, the losers on its path give
// the runner-up, and its events that sort before that go out without a
// replay: a thread's run, common when one thread writes most events (the
// sample profiler's).
func (r *Reader) merge(all bool, limit int64) {
	// Leaves: the queues with an event before limit (the others' events
	// all come after it: a thread's events are in order). Emptied queues
	// leave the list here.
	active, qs := r.active[:0], r.mqs[:0]
	for _, q := range r.active {
		if q.n == 0 {
			q.listed = false // enqueueRun lists it again
			continue
		}
		active = append(active, q)
		if all || q.fts < limit {
			qs = append(qs, q)
		}
	}
	clear(r.active[len(active):])
	r.active, r.mqs = active, qs
	k := len(qs)
	if k == 0 {
		return
	}
	// Tree nodes 1..k-1 hold the loser of their match, with its key so a
	// replay touches nothing else. Leaf i sits at position k+i of the
	// implicit tree; win holds the winners while building it bottom-up.
	nodes := r.mtree[:0]
	for range k {
		nodes = append(nodes, node{})
	}
	r.mtree = nodes
	win := r.mwin[:0]
	for range k {
		win = append(win, node{})
	}
	for i, q := range qs {
		win = append(win, node{q.front().skey(), int32(i)})
	}
	r.mwin = win
	for n := k - 1; n >= 1; n-- {
		a, b := win[2*n], win[2*n+1]
		if b.key.before(a.key) {
			a, b = b, a
		}
		win[n], nodes[n] = a, b
	}

	cur := win[1] // the winner: next event out (win[k] itself when k is 1)
	second := cur.key
	ready := r.ready
	for cur.key != noKey && (all || cur.key.ts < limit) {
		q := qs[cur.leaf]
		ru := &q.runs[q.rh]
		c, i, j := ru.c, ru.i, ru.j
		n, vh := q.n, q.vh
		for {
			ready = append(ready, &c.recs[i])
			i++
			n--
			if vh++; n == 0 || vh == chunkRecs {
				vh = 0
				r.chunks--
			}
			if i == j {
				if q.rh++; q.rh == len(q.runs) {
					// Emptied (an idle thread holds no memory).
					clear(q.runs)
					q.runs, q.rh = q.runs[:0], 0
					cur.key = noKey
					break
				}
				ru = &q.runs[q.rh]
				c, i, j = ru.c, ru.i, ru.j
			}
			next := c.recs[i].skey()
			if !next.before(second) || !all && next.ts >= limit {
				ru.i = i
				cur.key = next
				q.fts = next.ts
				break
			}
		}
		q.n, q.vh = n, vh
		// Replay the leaf's path to the root with its new key.
		second = noKey
		for n := (k + int(cur.leaf)) / 2; n >= 1; n /= 2 {
			if nd := &nodes[n]; nd.key.before(cur.key) {
				*nd, cur = cur, *nd
				second = cur.key // another queue won: no runner-up known
			} else if nd.key.before(second) {
				second = nd.key
			}
		}
	}
	r.ready = ready
}

// node is a queue (leaf index) and its front key in the merge's tree.
type node struct {
	key  sortKey
	leaf int32
}

// stackBlock parses a StackBlock (V4/V6 share the layout).
func (r *Reader) stackBlock(b []byte, start int64) error {
	if len(b) < 8 {
		return &FormatError{Offset: start, Msg: "stack block shorter than its 8-byte header"}
	}
	first, count := le32(b), le32(b[4:])
	p := 8
	ptr := r.hdr.PointerSize
	drained := false
	for i := uint32(0); i < count; i++ {
		if len(b)-p < 4 {
			return &FormatError{Offset: start, Msg: fmt.Sprintf("stack block declares %d stacks but ends after %d", count, i)}
		}
		n := int(le32(b[p:]))
		p += 4
		if n < 0 || n > len(b)-p {
			return &FormatError{Offset: start, Msg: fmt.Sprintf("stack %d size %d overruns its block", first+i, n)}
		}
		r.addStack(first+i, b[p:p+n], ptr, &drained)
		if d := n / ptr; d > r.fc.maxDepth {
			r.fc.maxDepth = d
		}
		p += n
		r.fc.stacks++
	}
	return nil
}

// addStack adds one stack to the cache's young generation, first making it
// the old one (and evicting the old one) when it holds half the budget.
// Changes other than growth at the end wait for the decoders (drain, once
// per block: nothing new is decoded while the framer parses this block).
func (r *Reader) addStack(id uint32, raw []byte, ptr int, drained *bool) {
	c := &r.stacks
	g := c.young
	if g.count > 0 && g.bytes >= c.max/2 {
		if o := c.old; o != nil {
			c.evicted += uint64(o.count)
			r.fc.evicted += uint64(o.count)
			r.releaseGen(o)
			c.gen++ // an evicted id may be defined again
		}
		c.old = g
		g = r.newGen()
		c.young = g
	}
	app := g.appendable(id)
	if !*drained && !app {
		r.drain()
		*drained = true
	}
	if !app || c.old != nil {
		// An id defined again names other IPs from here on.
		yv, ov := g.view(), c.old.view()
		if yv.get(id) != nil || ov.get(id) != nil {
			c.gen++
		}
	}
	g.add(id, raw, ptr, r.slab)
}

// resetStacks empties the stack cache at a sequence point: stack ids
// restart. Events already decoded keep their stacks: the generations are
// recycled only once they were delivered.
func (r *Reader) resetStacks() {
	c := &r.stacks
	if c.young.count == 0 && c.old == nil {
		return
	}
	r.releaseGen(c.young)
	if c.old != nil {
		r.releaseGen(c.old)
	}
	c.young, c.old = r.newGen(), nil
	c.gen++
}

// spBlockV4 parses a V4 sequence point: every queued event goes out first.
func (r *Reader) spBlockV4(b []byte, start int64) error {
	if len(b) < 12 {
		return &FormatError{Offset: start, Msg: "sequence point block shorter than 12 bytes"}
	}
	n := le32(b[8:])
	if uint64(n)*12 > uint64(len(b)-12) {
		return &FormatError{Offset: start, Msg: fmt.Sprintf("sequence point lists %d threads in %d bytes", n, len(b))}
	}
	sp := &spState{threads: make([]spThread, n)}
	for i := range sp.threads {
		p := 12 + i*12
		sp.threads[i] = spThread{capture: le64(b[p:]), seq: le32(b[p+8:])}
	}
	r.fc.sps++
	r.resetStacks()
	return r.emit(item{kind: itemSP, sp: sp})
}

// rawHeader is the decoded (possibly compressed) event blob header.
type rawHeader struct {
	metaID   uint32
	seq      uint32
	capture  uint64
	proc     uint32
	thread   uint64
	stackID  uint32
	ts       int64
	activity GUID
	related  GUID
	hasAct   bool   // activity or related was set in this block (else both are zero)
	label    uint32 // V6 label list id (replaces the activity ids)
	sorted   bool
	size     uint32
}

// blockHeader validates an Event/Metadata block header and returns the
// offset of the first blob and the flags.
func blockHeader(b []byte, start int64) (int, uint16, error) {
	if len(b) < 20 {
		return 0, 0, &FormatError{Offset: start, Msg: fmt.Sprintf("block of %d bytes is shorter than its header", len(b))}
	}
	hs := int(le16(b))
	if hs < 20 || hs > len(b) {
		return 0, 0, &FormatError{Offset: start, Msg: fmt.Sprintf("block header size %d invalid", hs)}
	}
	return hs, le16(b[2:]), nil
}

// readHeader decodes one blob header at b[p:] into h, returning the new
// position. Compressed headers update h in place (they are deltas).
func readHeader(b []byte, p int, compressed bool, h *rawHeader) (int, error) {
	if compressed {
		if p = readCompressed(b, p, false, h); p > len(b) {
			return len(b), errShortHeader
		}
		return p, nil
	}
	// 80 bytes: size, id, seq, thread, capture, proc, stack, ts, two GUIDs,
	// payload size.
	if len(b)-p < 80 {
		return p, errShortHeader
	}
	readFixed(b, p, h)
	copy(h.activity[:], b[p+44:p+60])
	copy(h.related[:], b[p+60:p+76])
	h.hasAct = true
	h.size = le32(b[p+76:])
	return p + 80, nil
}

// readFixed decodes the first 44 bytes V4/V5 and V6 uncompressed headers
// share: size (skipped), id with the sort bit, sequence number, thread,
// capture thread, processor, stack id and timestamp.
func readFixed(b []byte, p int, h *rawHeader) {
	id := le32(b[p+4:])
	h.metaID = id & 0x7FFFFFFF
	h.sorted = id&0x80000000 == 0
	h.seq = le32(b[p+8:])
	h.thread = le64(b[p+12:])
	h.capture = le64(b[p+20:])
	h.proc = le32(b[p+28:])
	h.stackID = le32(b[p+32:])
	h.ts = int64(le64(b[p+36:]))
}

// readCompressed decodes a compressed (delta) header at b[p:] into h, by
// the V4/V5 rules or, with v6, the V6 ones: the sequence number always
// advances by one, and flag 0x10 carries a label list id instead of the
// activity id (0x20 is unused).
func readCompressed(b []byte, p int, v6 bool, h *rawHeader) int {
	if p >= len(b) {
		return len(b) + 1
	}
	flags := b[p]
	p++
	var v uint64
	if flags&0x01 != 0 {
		if p < len(b) && b[p] < 0x80 {
			v = uint64(b[p])
			p++
		} else {
			v, p = uvar(b, p)
		}
		h.metaID = uint32(v)
	}
	if flags&0x02 != 0 {
		if p < len(b) && b[p] < 0x80 {
			v = uint64(b[p])
			p++
		} else {
			v, p = uvar(b, p)
		}
		h.seq += uint32(v)
		if !v6 {
			h.seq++
		}
		if p < len(b) && b[p] < 0x80 {
			h.capture = uint64(b[p])
			p++
		} else {
			h.capture, p = uvar(b, p)
		}
		if p < len(b) && b[p] < 0x80 {
			v = uint64(b[p])
			p++
		} else {
			v, p = uvar(b, p)
		}
		h.proc = uint32(v)
	} else if h.metaID != 0 && !v6 {
		h.seq++
	}
	if v6 {
		h.seq++
	}
	if flags&0x04 != 0 {
		if p < len(b) && b[p] < 0x80 {
			h.thread = uint64(b[p])
			p++
		} else {
			h.thread, p = uvar(b, p)
		}
	}
	if flags&0x08 != 0 {
		if p < len(b) && b[p] < 0x80 {
			v = uint64(b[p])
			p++
		} else {
			v, p = uvar(b, p)
		}
		h.stackID = uint32(v)
	}
	if p+1 < len(b) && b[p] >= 0x80 && b[p+1] < 0x80 {
		h.ts += int64(b[p]&0x7F) | int64(b[p+1])<<7
		p += 2
	} else {
		v, p = uvar(b, p)
		h.ts += int64(v)
	}
	if flags&0x30 != 0 {
		if v6 {
			if flags&0x10 != 0 {
				v, p = uvar(b, p)
				h.label = uint32(v)
			}
		} else {
			h.hasAct = true
			if flags&0x10 != 0 {
				if p >= 0 && len(b)-p >= 16 {
					copy(h.activity[:], b[p:])
				}
				p += 16
			}
			if flags&0x20 != 0 {
				if p >= 0 && len(b)-p >= 16 {
					copy(h.related[:], b[p:])
				}
				p += 16
			}
		}
	}
	h.sorted = flags&0x40 != 0
	if flags&0x80 != 0 {
		if p < len(b) && b[p] < 0x80 {
			v = uint64(b[p])
			p++
		} else {
			v, p = uvar(b, p)
		}
		h.size = uint32(v)
	}
	return p
}

// readRunTail is readCompressed (V4/V5) for a header whose flags carry no
// sequence number, capture thread, processor, activity ids or sort bit
// (b[p]&0x72 == 0, with p < len(b)): only a metadata id, a thread, a stack
// id, a size and the timestamp delta can follow. A run of rejected events
// is made of such headers; this is its decoder's whole loop body.
func readRunTail(b []byte, p int, h *rawHeader) int {
	flags := b[p]
	p++
	var v uint64
	if flags&0x01 != 0 {
		v, p = uvar(b, p)
		h.metaID = uint32(v)
	}
	if h.metaID != 0 {
		h.seq++
	}
	if flags&0x04 != 0 {
		if p < len(b) && b[p] < 0x80 {
			h.thread = uint64(b[p])
			p++
		} else {
			h.thread, p = uvar(b, p)
		}
	}
	if flags&0x08 != 0 {
		if p < len(b) && b[p] < 0x80 {
			v = uint64(b[p])
			p++
		} else {
			v, p = uvar(b, p)
		}
		h.stackID = uint32(v)
	}
	if p+1 < len(b) && b[p] >= 0x80 && b[p+1] < 0x80 {
		h.ts += int64(b[p]&0x7F) | int64(b[p+1])<<7
		p += 2
	} else {
		v, p = uvar(b, p)
		h.ts += int64(v)
	}
	h.sorted = false
	if flags&0x80 != 0 {
		if p < len(b) && b[p] < 0x80 {
			v = uint64(b[p])
			p++
		} else {
			v, p = uvar(b, p)
		}
		h.size = uint32(v)
	}
	return p
}

var errShortHeader = fmt.Errorf("event header runs past the end of its block")

// emitBlock hands an event block to the decoders and the consumer with
// what decoding it needs: its header, and the tables as they are now (the
// framer only adds to them at their end until no decoder runs; see drain).
// A block whose header is bad ends the stream (with the truncation, if the
// input was cut inside it).
func (r *Reader) emitBlock(b *blockBuf, kind uint8, start int64, cut *TruncatedError) error {
	b.kind, b.start, b.trunc = kind, start, cut
	b.pos, b.flags, b.prev, b.finished, b.err, b.cut, b.fc = 0, 0, rawHeader{}, false, nil, "", counts{}
	if kind != kindV3 {
		hs, flags, err := blockHeader(b.data, start)
		if err != nil {
			r.putBuf(b)
			if cut != nil {
				return cut
			}
			return err
		}
		b.pos, b.flags = hs, flags
	}
	b.metas, b.metaMap = r.metas, r.metaMap
	b.stk = [2]stackView{r.stacks.young.view(), r.stacks.old.view()}
	b.stkGen = r.stacks.gen
	r.blkSeq++
	b.ord = r.blkSeq << 32
	r.lastBlk = b
	return r.emit(item{kind: itemBlock, b: b})
}

func payloadOverrun(size uint32) error {
	return fmt.Errorf("event payload of %d bytes overruns its block", size)
}

// eventError turns a bad event of block b into the error that ends it: the
// block's truncation when the end of input cut it there (naming the event
// if its header survived), else a FormatError. p is where header decoding
// stopped.
func eventError(b *blockBuf, err error, p int) error {
	if t := b.trunc; t != nil {
		if m := lookupMeta(b.metas, b.metaMap, b.prev.metaID); m != nil && p <= len(b.data) && err != errShortHeader {
			// The header survived but the payload did not: say which
			// event was lost to the cut rather than deliver half of it.
			b.cut = fmt.Sprintf("%s (%d of %d payload bytes present)", m.FullName(), len(b.data)-p, b.prev.size)
		}
		return t // the cut fell inside this event
	}
	return &FormatError{Offset: b.start, Msg: err.Error()}
}

// metadataBlockV4 parses a MetadataBlock: blobs with event headers whose
// payloads are metadata records.
func (r *Reader) metadataBlockV4(b []byte, start int64) error {
	r.drain()
	p, flags, err := blockHeader(b, start)
	if err != nil {
		return err
	}
	compressed := flags&1 != 0
	var h rawHeader
	for p < len(b) {
		q, err := readHeader(b, p, compressed, &h)
		if err != nil {
			return &FormatError{Offset: start, Msg: "metadata " + err.Error()}
		}
		if uint64(h.size) > uint64(len(b)-q) {
			return &FormatError{Offset: start, Msg: "metadata payload overruns its block"}
		}
		m, err := parseMetadataRecord(b[q:q+int(h.size)], &r.fc.v5tags)
		if err != nil {
			return &FormatError{Offset: start, Msg: err.Error()}
		}
		r.defineMetadata(m, &r.fc)
		q += int(h.size)
		if !compressed {
			q = p + 4 + int(le32(b[p:]))
			if q <= p || q > len(b) {
				return &FormatError{Offset: start, Msg: "uncompressed metadata size field inconsistent"}
			}
		}
		p = q
	}
	return nil
}

// systemTime decodes a Windows SYSTEMTIME (8 uint16) as UTC.
func systemTime(b []byte) (time.Time, error) {
	y, mo, d := int(le16(b)), int(le16(b[2:])), int(le16(b[6:]))
	h, mi, s, ms := int(le16(b[8:])), int(le16(b[10:])), int(le16(b[12:])), int(le16(b[14:]))
	if y == 0 && mo == 0 && d == 0 {
		return time.Time{}, nil
	}
	if mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60 || ms > 999 {
		return time.Time{}, fmt.Errorf("invalid sync time %04d-%02d-%02d %02d:%02d:%02d.%03d", y, mo, d, h, mi, s, ms)
	}
	return time.Date(y, time.Month(mo), d, h, mi, s, ms*1e6, time.UTC), nil
}
