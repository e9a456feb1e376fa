package nettrace

// The event-block decoder: the reader's hot loop. Every event of every
// V4/V5/V6 block passes through decodeEvents once, so it keeps what only
// changes when the header says so (the capture thread's queue, the
// metadata) in locals and builds each event where it will be queued.

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

// decodeEvents decodes events of the current block (V6 rules with v6) into
// the thread queues until it holds a sorted event (which lets older queued
// events go out), the queue cap is hit, or the block is used up.
func (r *Reader) decodeEvents(v6 bool) error {
	b := r.blk.data
	p := r.blkPos
	h := &r.prev
	compressed := r.blkFlags&1 != 0
	q := r.lastThread // looked up by the first event when it is not this one
	m := r.metadata(h.metaID)
	st := &r.stacks
	for p < len(b) {
		start := p
		newMeta := true
		var payStart int
		var err error
		if compressed {
			newMeta = b[p]&0x01 != 0
			payStart, err = readCompressed(b, p, v6, h)
			if err == nil && uint64(h.size) > uint64(len(b)-payStart) {
				err = payloadOverrun(h.size)
			}
			p = payStart + int(h.size)
		} else {
			payStart, p, err = r.readUncompressed(b, p, v6)
		}
		if err != nil {
			r.blkPos = start
			if _, ok := err.(*FormatError); ok {
				return err
			}
			return r.eventError(err, payStart)
		}

		if q == nil || q.id != h.capture {
			q = r.thread(h.capture)
		}
		// A thread whose last number was 0 may be a recycled id: V4 does not
		// count that as a gap (TraceEvent's heuristic). V6 never recycles
		// thread indexes.
		lost := r.sequence(q, h.seq, !v6 && q.lastSeq == 0)
		if newMeta {
			m = r.metadata(h.metaID)
		}
		if m == nil {
			r.stats.UnknownMetadataRefs++
			continue
		}
		em, thread, capture, act, rel := m, h.thread, h.capture, h.activity, h.related
		if v6 {
			em, thread, capture, act, rel = r.v6Event(m, h.label, thread, capture)
		}
		r.order++
		var rc *rec
		if h.sorted {
			r.hasSorted = true
			r.limit = h.ts
			rc = &r.sorted
		} else { // enqueue, inlined: a call per event costs measurably here
			if q.ti == q.lim {
				r.enqueueRare(q)
			}
			rc = &q.tail.recs[q.ti]
			q.ti++
		}
		// Field by field: a composite literal would build a temporary and
		// copy it. Every field is set (slots are reused).
		rc.Meta, rc.order = em, r.order
		rc.Timestamp, rc.ThreadID, rc.CaptureThreadID = h.ts, thread, capture
		rc.ProcessorNumber, rc.SequenceNumber, rc.StackID = h.proc, h.seq, h.stackID
		rc.Stack = st.get(h.stackID)
		rc.ActivityID, rc.RelatedActivityID = act, rel
		rc.IsSorted, rc.LostBefore = h.sorted, lost
		end := payStart + int(h.size) // p may be past padding
		rc.Payload = b[payStart:end:end]
		if h.sorted || r.forced {
			r.blkPos = p
			return nil
		}
	}
	r.blkPos = p
	return r.endBlock()
}

// readUncompressed decodes the fixed-size (V4/V5 or, with v6, V6) header at
// b[pos:] into r.prev and returns where its payload starts and where the
// next event starts. A header or payload past the block's end is an error
// for eventError; a size field that contradicts the header is a
// *FormatError.
func (r *Reader) readUncompressed(b []byte, pos int, v6 bool) (payStart, next int, err error) {
	h := &r.prev
	fixed := 80
	if v6 {
		fixed = 52
		payStart, err = readHeaderV6(b, pos, h)
	} else {
		payStart, err = readHeader(b, pos, false, h)
	}
	if err == nil && uint64(h.size) > uint64(len(b)-payStart) {
		err = payloadOverrun(h.size)
	}
	if err != nil {
		return payStart, 0, err
	}
	// The size field covers the padding to 4-byte alignment.
	end := pos + fixed + int(h.size)
	next = pos + 4 + int(le32(b[pos:]))
	if next > len(b) && r.blkTrunc != nil && end <= len(b) {
		next = len(b) // the cut fell in the padding: the event is complete
	}
	if next < end || next > len(b) {
		return payStart, 0, &FormatError{Offset: r.blkStart, Msg: "uncompressed event size field inconsistent"}
	}
	return payStart, next, nil
}
