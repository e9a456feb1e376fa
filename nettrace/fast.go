package nettrace

// The decoder for event blocks with compressed headers, which is what every
// runtime since .NET Core 3.0 writes. It is the reader's hot loop, so it
// trades the layering of frame/readCompressed for state kept in locals:
// the capture thread's queue and the metadata only change when the header
// flags say so, and a varint is one comparison when it fits a byte. Blocks
// with uncompressed headers go through frame, which this must agree with
// (the tests run every real trace through both paths' callers).

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

// Each varint below is written out as "one byte, else uvar": the compiler
// will not inline a function with that fast path, and it is most values.
// The header fields live in locals while the loop runs (written back to
// r.prev, the state the next header is a delta of, when it stops), and so
// do the queue, metadata and stack-table lookups, which only change when
// the flags say so.

// decodeCompressed decodes events of the current block (compressed headers;
// V6 rules with v6) into the thread queues until it holds a sorted event,
// the queue cap is hit, or the block is used up.
func (r *Reader) decodeCompressed(v6 bool) error {
	b := r.blk.data
	p := r.blkPos
	h := &r.prev
	metaID, seq, capture := h.metaID, h.seq, h.capture
	thread, stackID, ts, size := h.thread, h.stackID, h.ts, h.size
	q := r.lastThread // looked up by the first event when it is not this one
	m := r.metadata(metaID)
	st := &r.stacks
	for p < len(b) {
		start := p
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
			metaID = uint32(v)
		}
		if flags&0x02 != 0 {
			if p < len(b) && b[p] < 0x80 {
				v = uint64(b[p])
				p++
			} else {
				v, p = uvar(b, p)
			}
			seq += uint32(v)
			if !v6 {
				seq++
			}
			if p < len(b) && b[p] < 0x80 {
				capture = uint64(b[p])
				p++
			} else {
				capture, p = uvar(b, p)
			}
			if p < len(b) && b[p] < 0x80 {
				v = uint64(b[p])
				p++
			} else {
				v, p = uvar(b, p)
			}
			h.proc = uint32(v)
		} else if metaID != 0 && !v6 {
			seq++
		}
		if v6 {
			seq++
		}
		if flags&0x04 != 0 {
			if p < len(b) && b[p] < 0x80 {
				thread = uint64(b[p])
				p++
			} else {
				thread, p = uvar(b, p)
			}
		}
		if flags&0x08 != 0 {
			if p < len(b) && b[p] < 0x80 {
				v = uint64(b[p])
				p++
			} else {
				v, p = uvar(b, p)
			}
			stackID = uint32(v)
		}
		// Timestamp deltas are mostly two bytes: decode those inline.
		if p+1 < len(b) && b[p] >= 0x80 && b[p+1] < 0x80 {
			ts += int64(b[p]&0x7F) | int64(b[p+1])<<7
			p += 2
		} else {
			v, p = uvar(b, p)
			ts += int64(v)
		}
		if flags&0x30 != 0 {
			if v6 {
				if flags&0x10 != 0 {
					v, p = uvar(b, p)
					h.label = uint32(v)
				}
			} else {
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
		sorted := flags&0x40 != 0
		if flags&0x80 != 0 {
			if p < len(b) && b[p] < 0x80 {
				v = uint64(b[p])
				p++
			} else {
				v, p = uvar(b, p)
			}
			size = uint32(v)
		}
		if p > len(b) || uint64(size) > uint64(len(b)-p) {
			var err error = errShortHeader
			if p <= len(b) {
				err = payloadOverrun(size)
			}
			h.metaID, h.seq, h.capture = metaID, seq, capture
			h.thread, h.stackID, h.ts, h.size, h.sorted = thread, stackID, ts, size, sorted
			r.blkPos = start
			return r.eventError(err, p)
		}
		payStart := p
		p += int(size)

		if q == nil || q.id != capture {
			q = r.thread(capture)
		}
		var lost uint32
		if v6 {
			lost = r.sequence(q, seq, false) // V6 never recycles thread indexes
		} else {
			// A thread whose last number was 0 may be a recycled id: V4
			// does not count that as a gap (TraceEvent's heuristic).
			lost = r.sequence(q, seq, q.lastSeq == 0)
		}
		if flags&0x01 != 0 {
			m = r.metadata(metaID)
		}
		if m == nil {
			r.stats.UnknownMetadataRefs++
			continue
		}
		// What emit does, inlined.
		em, othread, ocapture, act, rel := m, thread, capture, h.activity, h.related
		if v6 {
			em, othread, ocapture, act, rel = r.v6Event(m, h.label, thread, capture)
		}
		r.order++
		var rc *rec
		if sorted {
			r.hasSorted = true
			r.limit = ts
			rc = &r.sorted
		} else { // enqueue, inlined
			if q.ti == q.lim {
				r.enqueueRare(q)
			}
			rc = &q.tail.recs[q.ti]
			q.ti++
		}
		rc.Meta, rc.order = em, r.order
		rc.Timestamp, rc.ThreadID, rc.CaptureThreadID = ts, othread, ocapture
		rc.ProcessorNumber, rc.SequenceNumber, rc.StackID = h.proc, seq, stackID
		rc.Stack = st.get(stackID)
		rc.ActivityID, rc.RelatedActivityID = act, rel
		rc.IsSorted, rc.LostBefore = sorted, lost
		rc.Payload = b[payStart:p:p]
		if sorted || r.forced {
			h.metaID, h.seq, h.capture = metaID, seq, capture
			h.thread, h.stackID, h.ts, h.size = thread, stackID, ts, size
			r.blkPos = p
			return nil
		}
	}
	h.metaID, h.seq, h.capture = metaID, seq, capture
	h.thread, h.stackID, h.ts, h.size = thread, stackID, ts, size
	r.blkPos = p
	return r.endBlock()
}
