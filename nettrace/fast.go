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

// decodeCompressed decodes events of the current block (compressed headers;
// V6 rules with v6) into the thread queues until it holds a sorted event,
// the queue cap is hit, or the block is used up.
func (r *Reader) decodeCompressed(v6 bool) error {
	blk := r.blk
	b := blk.data
	p := r.blkPos
	h := &r.prev
	q := r.lastThread // looked up by the first event when it is not this one
	m := r.metadata(h.metaID)
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
		// Timestamp deltas are mostly two bytes: decode those inline.
		if p+1 < len(b) && b[p] >= 0x80 && b[p+1] < 0x80 {
			h.ts += int64(b[p]&0x7F) | int64(b[p+1])<<7
			p += 2
		} else {
			if p < len(b) && b[p] < 0x80 {
				v = uint64(b[p])
				p++
			} else {
				v, p = uvar(b, p)
			}
			h.ts += int64(v)
		}
		if flags&0x30 != 0 {
			if v6 {
				if flags&0x10 != 0 {
					if p < len(b) && b[p] < 0x80 {
						v = uint64(b[p])
						p++
					} else {
						v, p = uvar(b, p)
					}
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
		if p > len(b) || uint64(h.size) > uint64(len(b)-p) {
			var err error = errShortHeader
			if p <= len(b) {
				err = payloadOverrun(h.size)
			}
			r.blkPos = start
			return r.eventError(err, p)
		}
		payStart := p
		p += int(h.size)

		if q == nil || q.id != h.capture {
			q = r.thread(h.capture)
		}
		var lost uint32
		if v6 {
			lost = r.sequence(q, h.seq, false) // V6 never recycles thread indexes
		} else {
			// A thread whose last number was 0 may be a recycled id: V4
			// does not count that as a gap (TraceEvent's heuristic).
			lost = r.sequence(q, h.seq, q.lastSeq == 0)
		}
		if flags&0x01 != 0 {
			m = r.metadata(h.metaID)
		}
		if m == nil {
			r.stats.UnknownMetadataRefs++
			continue
		}
		// emit, inlined.
		em, thread, capture, act, rel := m, h.thread, h.capture, h.activity, h.related
		if v6 {
			em, thread, capture, act, rel = r.v6Event(m)
		}
		r.order++
		rc := r.place(q, h.sorted, h.ts)
		rc.Meta, rc.buf, rc.order = em, blk, r.order
		rc.Timestamp, rc.ThreadID, rc.CaptureThreadID = h.ts, thread, capture
		rc.ProcessorNumber, rc.SequenceNumber, rc.StackID = h.proc, h.seq, h.stackID
		// The stack cache's dense case, inlined.
		st := &r.stacks
		if i := int(h.stackID) - int(st.base); h.stackID != 0 && uint(i) < uint(len(st.entries)) {
			e := st.entries[i]
			off := int(e >> 32)
			end := off + int(uint32(e))
			rc.Stack = st.ips[off:end:end]
		} else {
			rc.Stack = st.getSparse(h.stackID)
		}
		rc.ActivityID, rc.RelatedActivityID = act, rel
		rc.IsSorted, rc.LostBefore = h.sorted, lost
		rc.Payload = b[payStart:p:p]
		if h.sorted || r.forced {
			r.blkPos = p
			return nil
		}
	}
	r.blkPos = p
	return r.endBlock()
}
