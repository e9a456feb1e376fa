package nettrace

import "fmt"

// parseNetPerfObject reads the next object of a NetPerf V3 stream: EventBlock
// v1 objects whose events have 56-byte uncompressed headers, inline metadata
// (MetadataId 0) and inline stacks. V3 has no sequence points or sort flags,
// so events are delivered in stream order, as TraceEvent does.
func (r *Reader) parseNetPerfObject() error {
	oh, start, err := r.nextObject(true)
	if err != nil {
		return err
	}
	b, cut, err := r.objectBody(oh, start)
	if err != nil {
		return err
	}
	if cut != nil {
		r.putBuf(b)
		return cut
	}
	if oh.name != "EventBlock" {
		r.putBuf(b)
		return nil
	}
	return r.emitBlock(b, kindV3, start, nil)
}

// fillNetPerf decodes events of a V3 EventBlock, in stream order, into c.
// Metadata comes inline (MetadataId 0) and is defined as it is met, so V3
// blocks are decoded on the framer's goroutine, in order.
func (r *Reader) fillNetPerf(b *blockBuf, c *recChunk) {
	d := b.data
	p := b.pos
	c.act = true // V3 headers carry activity ids
	fail := func(msg string) {
		b.pos, b.err, b.finished = p, &FormatError{Offset: b.start, Msg: msg}, true
		c.last = b.ord - 1
	}
	for p < len(d) && c.n < recChunkLen {
		if len(d)-p < 56 {
			fail("event header runs past the end of its block")
			return
		}
		evSize := int(le32(d[p:]))
		next := p + 4 + evSize
		if evSize < 52 || next > len(d) || next < p {
			fail(fmt.Sprintf("event size %d inconsistent with its block", evSize))
			return
		}
		metaID := le32(d[p+4:])
		thread := uint64(le32(d[p+8:]))
		ts := int64(le64(d[p+12:]))
		var act, rel GUID
		copy(act[:], d[p+20:p+36])
		copy(rel[:], d[p+36:p+52])
		psize := int(le32(d[p+52:]))
		q := p + 56
		if psize < 0 || psize > next-q {
			fail(fmt.Sprintf("payload of %d bytes overruns its event", psize))
			return
		}
		payload := d[q : q+psize : q+psize]
		q += psize
		var stack []uint64
		if next-q >= 4 {
			ss := int(le32(d[q:]))
			q += 4
			if ss < 0 || ss > next-q {
				fail(fmt.Sprintf("stack of %d bytes overruns its event", ss))
				return
			}
			if ss > 0 {
				b.fc.stacks++
				ptr := r.hdr.PointerSize
				n := ss / ptr
				if n > b.fc.maxDepth {
					b.fc.maxDepth = n
				}
				off := len(c.ips)
				for i := 0; i < n; i++ {
					if ptr == 8 {
						c.ips = append(c.ips, le64(d[q+i*8:]))
					} else {
						c.ips = append(c.ips, uint64(le32(d[q+i*4:])))
					}
				}
				stack = c.ips[off : off+n : off+n]
			}
		}
		p = next
		if metaID == 0 {
			m, err := parseMetadataRecord(payload, &b.fc.v5tags)
			if err != nil {
				fail(err.Error())
				return
			}
			r.defineMetadata(m, &b.fc)
			continue
		}
		// One queue (key ^0) keeps stream order: V3 has no sort flags.
		rc := &c.recs[c.n]
		c.n++
		*rc = rec{order: b.ord, key: ^uint64(0)}
		b.ord++
		rc.Meta = r.metadata(metaID) // nil: counted, not delivered
		n := int32(c.n)
		switch ls := len(c.segs) - 1; {
		case rc.Meta == nil:
			c.segs = append(c.segs, seg{n - 1, segUnknown})
		case ls >= 0 && c.segs[ls].kind == segRun:
		default:
			c.segs = append(c.segs, seg{n - 1, segRun})
		}
		rc.Timestamp, rc.ThreadID, rc.CaptureThreadID = ts, thread, thread
		rc.ProcessorNumber, rc.ActivityID, rc.RelatedActivityID = 0xFFFFFFFF, act, rel
		rc.Stack = stack
		rc.Payload = payload
		if len(stack) > 0 && rc.Meta != nil {
			c.withStack++
		}
		if rc.Meta != nil {
			c.count(rc.Meta, 1, uint64(min(len(stack), 1)))
		}
	}
	b.pos = p
	if p >= len(d) {
		b.finished = true
	}
	c.last = b.ord - 1
}
