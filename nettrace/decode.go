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
	ybase, yent, yfull := b.stk[0].base, b.stk[0].entries, b.stk[0].full
	n := c.n
	obase := b.ord - uint64(n) // record n has file order obase+n
	// Segments: runs of one thread's events (the consumer queues each at
	// once and checks its first sequence number; one whose numbers do not
	// follow each other it checks event by event), sorted events and
	// unknown ones alone. A record continues the last segment when that is
	// a run and the record before it has the same thread.
	lastRun := false
	// Every event's count goes to its record's entry in c.mcs once the
	// record changes (cm: the record counted in cn and cs).
	var cm *Metadata
	var cn, cs uint64
events:
	for p < len(data) && n < recChunkLen {
		start := p
		newMeta := true
		var payStart int
		if compressed {
			newMeta = data[p]&0x01 != 0
			payStart = readCompressed(data, p, v6, h)
			if p = payStart + int(h.size); p > len(data) { // a bad or cut event
				err := errShortHeader
				if payStart <= len(data) {
					err = payloadOverrun(h.size)
				}
				b.pos, b.err, b.finished = start, eventError(b, err, payStart), true
				break
			}
		} else {
			var err error
			if payStart, p, err = readUncompressed(b, start, v6); err != nil {
				if _, ok := err.(*FormatError); !ok {
					err = eventError(b, err, payStart)
				}
				b.pos, b.err, b.finished = start, err, true
				break
			}
		}
		if newMeta {
			m = lookupMeta(metas, metaMap, h.metaID)
		}
		var rc *rec
		var run uint8
		if m != nil && m.skip && !h.sorted {
			// A rejected event: it becomes the head of a run, its tail, or
			// the tail's replacement (the old tail is dropped). A run stays
			// in one chunk and one thread, its sequence numbers consecutive:
			// no gap (lost events) can hide inside it.
			run = runHead
			if n > 0 {
				t := &c.recs[n-1]
				if t.run != 0 && t.key == h.capture && h.seq == t.SequenceNumber+1 {
					run = runTail
					if t.run == runTail {
						c.dropped++
						rc = t
						rc.SequenceNumber = h.seq
						rc.ActivityID, rc.RelatedActivityID = GUID{}, GUID{}
					}
				}
			}
		}
		if rc == nil {
			rc = &c.recs[n]
			n++
			rc.order, rc.key, rc.SequenceNumber, rc.LostBefore = obase+uint64(n-1), h.capture, h.seq, 0
			switch {
			case m == nil:
				rc.Meta = nil // counted by the consumer, not delivered
				c.segs = append(c.segs, seg{int32(n - 1), segUnknown})
				lastRun = false
				continue
			case h.sorted:
				c.segs = append(c.segs, seg{int32(n - 1), segSorted})
				lastRun = false
			case lastRun && c.recs[n-2].key == h.capture:
				if h.seq != c.recs[n-2].SequenceNumber+1 {
					c.segs[len(c.segs)-1].kind = segRunGaps
				}
			default:
				c.segs = append(c.segs, seg{int32(n - 1), segRun})
				lastRun = true
			}
		}
		rc.run = run
		// Field by field: a composite literal would build a temporary and
		// copy it. Every field but LostBefore (the consumer's) is set:
		// records are reused.
		if v6 {
			rc.Meta, rc.ThreadID, rc.CaptureThreadID, rc.ActivityID, rc.RelatedActivityID = r.v6Event(m, h.label, h.thread, h.capture)
			c.act = true
		} else {
			rc.Meta, rc.ThreadID, rc.CaptureThreadID = m, h.thread, h.capture
			if h.hasAct { // rare: a chunk's ids are zero until then
				rc.ActivityID, rc.RelatedActivityID = h.activity, h.related
				c.act = true
			}
		}
		rc.Timestamp, rc.ProcessorNumber, rc.StackID, rc.StackGen = h.ts, h.proc, h.stackID, b.stkGen
		var st []uint64
		if i := int(h.stackID) - int(ybase); h.stackID != 0 && uint(i) < uint(len(yent)) {
			st = yent[i]
		} else if h.stackID != 0 {
			if st = lookupStack(&b.stk, h.stackID); st == nil {
				c.allUnresolved++
				if run == 0 {
					c.unresolved++
				}
			}
		}
		if rc.Meta != cm {
			c.count(cm, cn, cs)
			cm, cn, cs = rc.Meta, 0, 0
		}
		cn++
		if len(st) > 0 {
			cs++
			if run == 0 {
				c.withStack++
			}
		}
		rc.Stack = st
		rc.IsSorted = h.sorted
		end := payStart + int(h.size) // p may be past padding
		rc.Payload = data[payStart:end:end]
		if run != runTail || !compressed || v6 {
			continue
		}
		// rc is the tail of a run of rejected events: the events that
		// follow it with the same capture thread and consecutive sequence
		// numbers (a compressed header without flag 0x02), unsorted and
		// with the same activity ids (no 0x10, 0x20, 0x40), and whose
		// metadata is rejected too (the same, or a new id without flag
		// 0x01), replace it one after another. They are only counted and
		// their headers decoded; the tail takes the last one's fields, its
		// pointers once, at the end.
		// The tail's stack is looked up once, at the end: yfull says
		// whether each event has one (tsi: its index in yent, or -1 when
		// tst holds it).
		tst, tsi, tpay, tend, tm := st, -1, payStart, end, m
		for p < len(data) && data[p]&0x72 == 0 {
			start := p
			var nm *Metadata
			if data[p]&0x01 != 0 {
				// Another event of the run only if rejected too (id 0
				// does not advance the sequence number: never a tail).
				id, q := uvar(data, p+1)
				if q > len(data) || id == 0 {
					break
				}
				if nm = lookupMeta(metas, metaMap, uint32(id)); nm == nil || !nm.skip {
					break
				}
			}
			payStart := readRunTail(data, p, h)
			if p = payStart + int(h.size); p > len(data) {
				err := errShortHeader
				if payStart <= len(data) {
					err = payloadOverrun(h.size)
				}
				b.pos, b.err, b.finished = start, eventError(b, err, payStart), true
				if tsi >= 0 {
					tst = yent[tsi]
				}
				rc.Meta, rc.Stack, rc.Payload = tm, tst, data[tpay:tend:tend]
				break events
			}
			if nm != nil && nm != m {
				m = nm
				c.count(cm, cn, cs)
				cm, cn, cs = m, 0, 0
			}
			var st []uint64
			si := -1
			if i := int(h.stackID) - int(ybase); h.stackID != 0 && uint(i) < uint(len(yfull)) {
				si = i
				if yfull[i] {
					cs++
				}
			} else if h.stackID != 0 {
				if st = lookupStack(&b.stk, h.stackID); st == nil {
					c.allUnresolved++
				} else if len(st) > 0 {
					cs++
				}
			}
			cn++
			c.dropped++
			rc.SequenceNumber, rc.Timestamp, rc.ThreadID, rc.ProcessorNumber, rc.StackID = h.seq, h.ts, h.thread, h.proc, h.stackID
			tst, tsi, tpay, tend, tm = st, si, payStart, payStart+int(h.size), m
		}
		if tsi >= 0 {
			tst = yent[tsi]
		}
		rc.Meta, rc.Stack, rc.Payload = tm, tst, data[tpay:tend:tend]
	}
	c.count(cm, cn, cs)
	if !b.finished {
		b.pos = p
		if p >= len(data) {
			b.finished = true
			if b.trunc != nil {
				b.err = b.trunc
			}
		}
	}
	b.ord = obase + uint64(n)
	c.n = n
	c.last = b.ord - 1
}

// count adds n events of m, s of them with a stack, to c's counts.
func (c *recChunk) count(m *Metadata, n, s uint64) {
	if n == 0 {
		return
	}
	for i := range c.mcs {
		if x := &c.mcs[i]; x.m == m {
			x.events += n
			x.stack += s
			return
		}
	}
	c.mcs = append(c.mcs, metaCount{m, n, s})
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
			r.chunk, r.ci, r.ri = c, 0, -1
			r.stats.UnresolvedStacks += uint64(c.unresolved)
			r.stats.EventsWithStack += uint64(c.withStack)
			r.stats.Skipped += uint64(c.dropped)
			r.stats.AllUnresolved += uint64(c.allUnresolved)
			for i := range c.mcs {
				x := &c.mcs[i]
				if m := x.m; m.listed {
					m.readEvents += x.events
					m.readStack += x.stack
				} else {
					m.readEvents, m.readStack, m.listed = x.events, x.stack, true
					r.counted = append(r.counted, m)
				}
				r.stats.AllWithStack += x.stack
			}
		}
		if r.consumeChunk() {
			return nil
		}
		r.inchunks = append(r.inchunks, r.chunk)
		r.chunk = nil
	}
}

// consumeChunk queues the segments of r.chunk from r.ci on (from record
// r.ri of the first, when a drain interrupted it); it reports whether it
// stopped early at a sorted event or the queue cap.
func (r *Reader) consumeChunk() bool {
	c := r.chunk
	v3, v6 := r.cur.kind == kindV3, r.cur.kind == kindV6
	for si := r.ci; si < len(c.segs); si++ {
		s := c.segs[si]
		end := int32(c.n)
		if si+1 < len(c.segs) {
			end = c.segs[si+1].start
		}
		rc := &c.recs[s.start]
		if s.kind == segUnknown {
			if !v3 {
				q := r.thread(rc.key)
				r.sequence(q, rc.SequenceNumber, !v6 && q.lastSeq == 0)
			}
			r.stats.UnknownMetadataRefs++
			continue
		}
		q := r.thread(rc.key)
		start := s.start
		if r.ri >= 0 {
			start, r.ri = r.ri, -1 // resumed: its first events are queued
		} else if !v3 {
			// A thread whose last number was 0 may be a recycled id: V4
			// does not count that as a gap (TraceEvent's heuristic). V6
			// never recycles thread indexes.
			rc.LostBefore = r.sequence(q, rc.SequenceNumber, !v6 && q.lastSeq == 0)
			if s.kind == segRunGaps {
				for k := s.start + 1; k < end; k++ {
					// A tail follows its run's last event (dropped or
					// the head) without a gap.
					e := &c.recs[k]
					e.LostBefore = r.sequence(q, e.SequenceNumber, e.run == runTail || !v6 && q.lastSeq == 0)
				}
			}
			q.lastSeq = c.recs[end-1].SequenceNumber
		}
		if s.kind == segSorted {
			r.sorted = rc
			r.limit = rc.Timestamp
			r.ci = si + 1
			return true
		}
		if n := r.enqueueRun(q, c, start, end); r.forced {
			r.ci = si + 1
			if start+n < end {
				r.ci, r.ri = si, start+n
			}
			return true
		}
	}
	r.ci = len(c.segs)
	return false
}

// endBlock retires the used-up current block and returns what ended it
// early or its truncation.
func (r *Reader) endBlock() error {
	b := r.cur
	r.cur = nil
	b.done, b.last = true, b.ord-1
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
