package nettrace

// The event-block decoder and the consumer's loop: the reader's hot path.
// A decoder turns a block into records in file order (fill), resolving what
// the framer's tables say (metadata, stacks, V6 threads and labels) as of
// the block; the consumer walks the records in file order (consumeChunk),
// keeps each capture thread's sequence numbers, and queues them for the
// merge. Every event passes through each loop once, so both keep what only
// changes when the header says so in locals.

// uvar decodes a LEB128 value at b[p:]. Instead of an ok result it returns
// a position past len(b) on failure, which stays past it through later
// calls, so a header needs one check at its end. Small enough to inline.
func uvar(b []byte, p int) (uint64, int) {
	var x uint64
	for s := uint(0); s < 64 && p < len(b); s += 7 {
		c := b[p]
		p++
		x |= uint64(c&0x7F) << s
		if c < 0x80 {
			return x, p
		}
	}
	return 0, len(b) + 1
}

// fill decodes events of b into c until c is full or the block ends (or an
// event is bad: b.err then says why, and the events before it are in c).
// It reads only b and, for V6, the framer's V6 tables (V6 blocks are
// decoded on the framer's goroutine).
func (r *Reader) fill(b *blockBuf, c *recChunk) {
	if b.kind == kindV3 {
		r.fillNetPerf(b, c)
		return
	}
	data := b.data
	p := b.pos
	h := &b.prev
	v6 := b.kind == kindV6
	compressed := b.flags&1 != 0
	metas, metaMap := b.metas, b.metaMap
	m := lookupMeta(metas, metaMap, h.metaID)
	ybase, yent := b.stk[0].base, b.stk[0].entries
	n, unresolved := c.n, 0
	for p < len(data) && n < recChunkLen {
		start := p
		newMeta := true
		var payStart int
		var err error
		if compressed {
			newMeta = data[p]&0x01 != 0
			payStart, err = readCompressed(data, p, v6, h)
			if err == nil && uint64(h.size) > uint64(len(data)-payStart) {
				err = payloadOverrun(h.size)
			}
			p = payStart + int(h.size)
		} else {
			payStart, p, err = readUncompressed(b, start, v6)
		}
		if err != nil {
			if _, ok := err.(*FormatError); !ok {
				err = eventError(b, err, payStart)
			}
			b.pos, b.err, b.finished = start, err, true
			c.n, c.unresolved = n, c.unresolved+unresolved
			return
		}
		if newMeta {
			m = lookupMeta(metas, metaMap, h.metaID)
		}
		rc := &c.recs[n]
		n++
		rc.key, rc.SequenceNumber = h.capture, h.seq
		if m == nil {
			rc.Meta = nil // counted by the consumer, not delivered
			continue
		}
		em, thread, capture, act, rel := m, h.thread, h.capture, h.activity, h.related
		if v6 {
			em, thread, capture, act, rel = r.v6Event(m, h.label, thread, capture)
		}
		// Field by field: a composite literal would build a temporary and
		// copy it. Every field but order and LostBefore (the consumer's) is
		// set: records are reused.
		rc.Meta = em
		rc.Timestamp, rc.ThreadID, rc.CaptureThreadID = h.ts, thread, capture
		rc.ProcessorNumber, rc.StackID = h.proc, h.stackID
		var st []uint64
		if i := int(h.stackID) - int(ybase); h.stackID != 0 && uint(i) < uint(len(yent)) {
			st = yent[i]
		} else if h.stackID != 0 {
			if st = lookupStack(&b.stk, h.stackID); st == nil {
				unresolved++
			}
		}
		rc.Stack = st
		rc.ActivityID, rc.RelatedActivityID = act, rel
		rc.IsSorted = h.sorted
		end := payStart + int(h.size) // p may be past padding
		rc.Payload = data[payStart:end:end]
	}
	b.pos = p
	c.n, c.unresolved = n, c.unresolved+unresolved
	if p >= len(data) {
		b.finished = true
		if b.trunc != nil {
			b.err = b.trunc
		}
	}
}

// readUncompressed decodes the fixed-size (V4/V5 or, with v6, V6) header at
// b.data[pos:] into b.prev and returns where its payload starts and where
// the next event starts. A header or payload past the block's end is an
// error for eventError; a size field that contradicts the header is a
// *FormatError.
func readUncompressed(b *blockBuf, pos int, v6 bool) (payStart, next int, err error) {
	d, h := b.data, &b.prev
	fixed := 80
	if v6 {
		fixed = 52
		payStart, err = readHeaderV6(d, pos, h)
	} else {
		payStart, err = readHeader(d, pos, false, h)
	}
	if err == nil && uint64(h.size) > uint64(len(d)-payStart) {
		err = payloadOverrun(h.size)
	}
	if err != nil {
		return payStart, 0, err
	}
	// The size field covers the padding to 4-byte alignment.
	end := pos + fixed + int(h.size)
	next = pos + 4 + int(le32(d[pos:]))
	if next > len(d) && b.trunc != nil && end <= len(d) {
		next = len(d) // the cut fell in the padding: the event is complete
	}
	if next < end || next > len(d) {
		return payStart, 0, &FormatError{Offset: b.start, Msg: "uncompressed event size field inconsistent"}
	}
	return payStart, next, nil
}

// nextChunk returns the next decoded chunk of b, or nil at its end: from
// the decoder goroutine, or decoded here.
func (r *Reader) nextChunk(b *blockBuf) *recChunk {
	if r.pipe != nil {
		return <-b.ch
	}
	for !b.finished {
		c := r.getChunk()
		r.fill(b, c)
		if c.n > 0 {
			return c
		}
		r.putChunks([]*recChunk{c})
	}
	return nil
}

// consume queues events of the current block until one is sorted (which
// lets older queued events go out), the queue cap is hit, or the block is
// used up; then it returns the error that ended the block, if any.
func (r *Reader) consume() error {
	for {
		if r.chunk == nil {
			c := r.nextChunk(r.cur)
			if c == nil {
				return r.endBlock()
			}
			r.chunk, r.ci = c, 0
			r.stats.UnresolvedStacks += uint64(c.unresolved)
		}
		if r.consumeChunk() {
			return nil
		}
		r.chunk.last = r.order
		r.inchunks = append(r.inchunks, r.chunk)
		r.chunk = nil
	}
}

// consumeChunk queues the records of r.chunk from r.ci on; it reports
// whether it stopped early at a sorted event or the queue cap.
func (r *Reader) consumeChunk() bool {
	c := r.chunk
	v3, v6 := r.cur.kind == kindV3, r.cur.kind == kindV6
	q := r.lastThread
	for i := r.ci; i < c.n; i++ {
		rc := &c.recs[i]
		var lost uint32
		if !v3 {
			if q == nil || q.id != rc.key {
				q = r.thread(rc.key)
			}
			// A thread whose last number was 0 may be a recycled id: V4
			// does not count that as a gap (TraceEvent's heuristic). V6
			// never recycles thread indexes.
			lost = r.sequence(q, rc.SequenceNumber, !v6 && q.lastSeq == 0)
		}
		if rc.Meta == nil {
			r.stats.UnknownMetadataRefs++
			continue
		}
		if q == nil || q.id != rc.key {
			q = r.thread(rc.key) // V3 (the others looked theirs up above)
		}
		rc.LostBefore = lost
		r.order++
		rc.order = r.order
		if rc.IsSorted {
			r.sorted = rc
			r.limit = rc.Timestamp
			r.ci = i + 1
			return true
		}
		// Queueing, written out: a call per event costs measurably here.
		if q.ti == q.lim {
			r.enqueueRare(q)
		}
		q.tail.recs[q.ti] = rc
		q.ti++
		if r.forced {
			r.ci = i + 1
			return true
		}
	}
	r.ci = c.n
	return false
}

// endBlock retires the used-up current block and returns what ended it
// early or its truncation.
func (r *Reader) endBlock() error {
	b := r.cur
	r.cur = nil
	b.done, b.last = true, r.order
	r.cnt.add(&b.fc)
	if b.cut != "" {
		r.stats.CutEvent = b.cut
	}
	if b.kind == kindV3 && b.err == nil {
		// V3 has no sort flags: everything read so far may go out.
		r.flushAll = true
	}
	return b.err
}

// sequence records an event's sequence number for its capture thread and
// returns how many events of that thread were lost just before it (a gap,
// plus gaps a sequence point found). noGap skips the gap check.
func (r *Reader) sequence(q *threadQueue, seq uint32, noGap bool) uint32 {
	var lost uint32
	if q.seqInit && !noGap {
		if d := int32(seq - q.lastSeq - 1); d > 0 {
			lost = uint32(d)
			r.stats.LostEvents += uint64(d)
		}
	}
	q.lastSeq = seq
	q.seqInit = true
	lost += q.pendingLost
	q.pendingLost = 0
	return lost
}
