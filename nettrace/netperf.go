package nettrace

import (
	"fmt"
	"io"
)

// parseNetPerfObject reads the next object of a NetPerf V3 stream: EventBlock
// v1 objects whose events have 56-byte uncompressed headers, inline metadata
// (MetadataId 0) and inline stacks. V3 has no sequence points or sort flags,
// so events are delivered in stream order, as TraceEvent does.
func (r *Reader) parseNetPerfObject() error {
	s := r.src
	start := s.off
	tag, err := s.readByte()
	if err != nil {
		return r.eofAs(err, start, "next object (no end-of-stream tag)")
	}
	if tag == tagNullReference {
		return io.EOF
	}
	if tag != tagBeginObject && tag != tagBeginPrivateObject {
		return &FormatError{Offset: start, Msg: fmt.Sprintf("expected object or end tag, found 0x%02x", tag)}
	}
	oh, err := r.readObjectHeader(start)
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
	r.inflight = append(r.inflight, b)
	err = r.netperfEvents(b, start)
	b.done, b.last = true, r.order
	return err
}

// netperfEvents queues every event of a V3 EventBlock in stream order.
func (r *Reader) netperfEvents(b *blockBuf, start int64) error {
	d := b.data
	p := 0
	// Every event of the previous block went out before this one was read.
	r.v3stacks = r.v3stacks[:0]
	for p < len(d) {
		if len(d)-p < 56 {
			return &FormatError{Offset: start, Msg: "event header runs past the end of its block"}
		}
		evSize := int(le32(d[p:]))
		next := p + 4 + evSize
		if evSize < 52 || next > len(d) || next < p {
			return &FormatError{Offset: start, Msg: fmt.Sprintf("event size %d inconsistent with its block", evSize)}
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
			return &FormatError{Offset: start, Msg: fmt.Sprintf("payload of %d bytes overruns its event", psize)}
		}
		payload := d[q : q+psize : q+psize]
		q += psize
		var stOff, stLen uint32
		if next-q >= 4 {
			ss := int(le32(d[q:]))
			q += 4
			if ss < 0 || ss > next-q {
				return &FormatError{Offset: start, Msg: fmt.Sprintf("stack of %d bytes overruns its event", ss)}
			}
			if ss > 0 {
				r.stats.Stacks++
				ptr := r.hdr.PointerSize
				n := ss / ptr
				if n > r.stats.MaxStackDepth {
					r.stats.MaxStackDepth = n
				}
				stOff, stLen = uint32(len(r.v3stacks)), uint32(n)
				for i := 0; i < n; i++ {
					if ptr == 8 {
						r.v3stacks = append(r.v3stacks, le64(d[q+i*8:]))
					} else {
						r.v3stacks = append(r.v3stacks, uint64(le32(d[q+i*4:])))
					}
				}
			}
		}
		p = next
		if metaID == 0 {
			m, err := parseMetadataRecord(payload, &r.stats)
			if err != nil {
				return &FormatError{Offset: start, Msg: err.Error()}
			}
			r.defineMetadata(m)
			continue
		}
		m := r.metadata(metaID)
		if m == nil {
			r.stats.UnknownMetadataRefs++
			continue
		}
		q2 := r.thread(^uint64(0)) // one queue keeps stream order
		r.order++
		rc := r.enqueue(q2)
		*rc = rec{order: r.order}
		rc.Meta, rc.Timestamp, rc.ThreadID, rc.CaptureThreadID = m, ts, thread, thread
		rc.ProcessorNumber, rc.ActivityID, rc.RelatedActivityID = 0xFFFFFFFF, act, rel
		rc.Stack = r.v3stacks[stOff : stOff+stLen : stOff+stLen]
		rc.Payload = payload
	}
	// Everything read so far may go out before the next block.
	r.flushAll = true
	return nil
}
