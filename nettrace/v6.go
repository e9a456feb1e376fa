package nettrace

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
)

// NetTrace V6 (the block format): a 4-byte block header (24-bit size, 8-bit
// kind) instead of FastSerialization objects, thread indexes resolved through
// Thread blocks, label lists instead of activity ids in event headers, and
// metadata rows of their own. Events go through the same per-thread queues
// and sort as V4; the queues are keyed by capture thread index, which V6
// never reuses.

// v6State is the V6-only part of a Reader.
type v6State struct {
	threads   map[uint64]uint64 // thread index -> OS thread id
	labels    map[uint32]v6Label
	overrides map[overrideKey]*Metadata

	// One-entry cache in front of threads (events come in per-thread runs);
	// cleared whenever threads changes.
	cacheIdx, cacheTid uint64
	cacheOK            bool
}

// v6Label is one resolved label list.
type v6Label struct {
	act, rel GUID
	has      uint8 // labelHas* bits
	opcode   uint8
	level    uint8
	version  uint8
	keywords uint64
}

const (
	labelHasOpcode = 1 << iota
	labelHasKeywords
	labelHasLevel
	labelHasVersion
)

// overrideKey identifies metadata with label-list overrides applied.
type overrideKey struct {
	m        *Metadata
	has      uint8
	opcode   uint8
	level    uint8
	version  uint8
	keywords uint64
}

var v6BlockNames = [...]string{
	v6EndOfStream:   "EndOfStream",
	v6Trace:         "Trace",
	v6Event:         "EventBlock",
	v6Metadata:      "MetadataBlock",
	v6SequencePoint: "SPBlock",
	v6Stack:         "StackBlock",
	v6Thread:        "ThreadBlock",
	v6RemoveThread:  "RemoveThreadBlock",
	v6LabelList:     "LabelListBlock",
}

func v6BlockName(kind byte) string {
	if int(kind) < len(v6BlockNames) {
		return v6BlockNames[kind]
	}
	return "Block" + strconv.Itoa(int(kind))
}

// startV6 reads the rest of the V6 stream header and the Trace block.
func (r *Reader) startV6() error {
	s := r.src
	var v [8]byte
	if err := s.readFull(v[:]); err != nil {
		return r.eofAs(err, 0, "stream header")
	}
	major, minor := le32(v[:]), le32(v[4:])
	if major < 6 {
		return &FormatError{Offset: 12, Msg: fmt.Sprintf("NetTrace V6-style header with major version %d (expected 6)", major)}
	}
	if major > 6 {
		return &UnsupportedVersionError{Found: fmt.Sprintf("NetTrace V%d.%d (major versions above 6 are not readable)", major, minor)}
	}
	r.hdr.FormatVersion = FormatNetTraceV6
	r.hdr.MinorVersion = int(minor)
	r.v6 = &v6State{
		threads:   make(map[uint64]uint64),
		labels:    make(map[uint32]v6Label),
		overrides: make(map[overrideKey]*Metadata),
	}
	r.parse = r.parseV6Block

	start := s.off
	h, err := s.u32()
	if err != nil {
		return r.eofAs(err, start, "Trace block")
	}
	if kind := byte(h >> 24); kind != v6Trace {
		return &FormatError{Offset: start, Msg: fmt.Sprintf("expected the Trace block first, found %s", v6BlockName(kind))}
	}
	b, err := s.readBlock(nil, int(h&0xFFFFFF))
	if err != nil {
		return r.eofAs(err, start, "Trace block")
	}
	r.fc.block("Trace")
	return r.traceBlockV6(b, start)
}

func (r *Reader) traceBlockV6(b []byte, start int64) error {
	if len(b) < 40 {
		return &FormatError{Offset: start, Msg: fmt.Sprintf("Trace block of %d bytes is shorter than its 40 fixed bytes", len(b))}
	}
	t, err := systemTime(b[0:16])
	if err != nil {
		return &FormatError{Offset: start, Msg: err.Error()}
	}
	r.hdr.SyncTimeUTC = t
	r.hdr.SyncTimeQPC = int64(le64(b[16:]))
	r.hdr.QPCFrequency = int64(le64(b[24:]))
	r.hdr.PointerSize = int(int32(le32(b[32:])))
	n := le32(b[36:])
	c := &Cursor{b: b, p: 40}
	if int64(n) > int64(c.Rest()) {
		return &FormatError{Offset: start, Msg: fmt.Sprintf("Trace block declares %d key/value pairs in %d bytes", n, c.Rest())}
	}
	for i := uint32(0); i < n; i++ {
		k, v := c.UTF8(), c.UTF8()
		if c.err != nil {
			return &FormatError{Offset: start, Msg: fmt.Sprintf("Trace block key/value pair %d: %v", i, c.err)}
		}
		var dst *int
		switch k {
		case "ProcessId":
			dst = &r.hdr.ProcessID
		case "HardwareThreadCount":
			dst = &r.hdr.NumberOfProcessors
		case "ExpectedCPUSamplingRate":
			dst = &r.hdr.ExpectedCPUSamplingRate
		}
		if dst != nil {
			if x, err := strconv.ParseInt(v, 10, 32); err == nil {
				*dst = int(x)
				continue
			}
		}
		if r.hdr.KeyValues == nil {
			r.hdr.KeyValues = make(map[string]string)
		}
		r.hdr.KeyValues[k] = v
	}
	return r.checkHeader()
}

// parseV6Block reads the next block of a V6 stream.
func (r *Reader) parseV6Block() error {
	s := r.src
	start := s.off
	h, err := s.u32()
	if err != nil {
		return r.eofAs(err, start, "next block (no end-of-stream block)")
	}
	size, kind := int(h&0xFFFFFF), byte(h>>24)
	if kind == v6EndOfStream {
		if err := s.skip(size); err != nil {
			return r.eofAs(err, start, "end-of-stream block")
		}
		r.fc.block("EndOfStream")
		return io.EOF
	}
	name := v6BlockName(kind)
	if err := r.waitAhead(int64(size)); err != nil {
		return err
	}
	b := r.getBuf()
	b.data, err = s.readBlock(b.data, size)
	if err != nil {
		if isEOF(err) && kind == v6Event {
			// Deliver the complete events of the cut block, then report.
			r.fc.block(name)
			return r.emitBlock(b, kindV6, start, &TruncatedError{Offset: start, What: name})
		}
		r.putBuf(b)
		return r.eofAs(err, start, name)
	}
	r.fc.block(name)
	switch kind {
	case v6Event:
		return r.emitBlock(b, kindV6, start, nil)
	case v6Metadata:
		err = r.metadataBlockV6(b.data, start)
	case v6Stack:
		err = r.stackBlock(b.data, start)
	case v6SequencePoint:
		err = r.spBlockV6(b.data, start)
	case v6Thread:
		err = r.threadBlockV6(b.data, start)
	case v6RemoveThread:
		err = r.removeThreadBlockV6(b.data, start)
	case v6LabelList:
		err = r.labelListBlockV6(b.data, start)
	case v6Trace:
		err = &FormatError{Offset: start, Msg: "second Trace block"}
	default:
		// Unknown kinds are skipped: new kinds come with minor versions.
	}
	r.putBuf(b)
	return err
}

// readHeaderV6 decodes one V6 event header at b[p:] into h.
func readHeaderV6(b []byte, p int, h *rawHeader) (int, error) {
	if len(b)-p < 52 {
		return p, errShortHeader
	}
	readFixed(b, p, h)
	h.label = le32(b[p+44:])
	h.size = le32(b[p+48:])
	return p + 52, nil
}

// v6Event resolves what V6 keeps outside the event header: the label
// list (activity ids, metadata overrides) and the OS ids of the thread
// indexes.
func (r *Reader) v6Event(m *Metadata, label uint32, thread, capture uint64) (em *Metadata, othread, ocapture uint64, act, rel GUID) {
	em = m
	if label != 0 {
		lb := r.v6.labels[label]
		if lb.has != 0 {
			em = r.overridden(m, &lb)
		}
		act, rel = lb.act, lb.rel
	}
	return em, r.v6.osThread(thread), r.v6.osThread(capture), act, rel
}

// osThread maps a thread index to its OS thread id; an index that no
// Thread block described stands for itself.
func (v *v6State) osThread(idx uint64) uint64 {
	if v.cacheOK && v.cacheIdx == idx {
		return v.cacheTid
	}
	tid, ok := v.threads[idx]
	if !ok {
		tid = idx
	}
	v.cacheIdx, v.cacheTid, v.cacheOK = idx, tid, true
	return tid
}

// overridden returns m with the label list's opcode, keywords, level and
// version applied; the copies are cached so the hot path stays cheap.
func (r *Reader) overridden(m *Metadata, lb *v6Label) *Metadata {
	k := overrideKey{m: m, has: lb.has, opcode: lb.opcode, level: lb.level, version: lb.version, keywords: lb.keywords}
	if o := r.v6.overrides[k]; o != nil {
		return o
	}
	o := *m
	if lb.has&labelHasOpcode != 0 {
		o.Opcode = lb.opcode
	}
	if lb.has&labelHasKeywords != 0 {
		o.Keywords = lb.keywords
	}
	if lb.has&labelHasLevel != 0 {
		o.Level = lb.level
	}
	if lb.has&labelHasVersion != 0 {
		o.Version = uint32(lb.version)
	}
	o.Name = displayName(&o)
	r.v6.overrides[k] = &o
	return &o
}

// metadataBlockV6 parses a V6 metadata block: a sized header to skip, then
// rows of (size, id, provider, event id, name, fields, optional metadata).
func (r *Reader) metadataBlockV6(b []byte, start int64) error {
	r.drain()
	c := &Cursor{b: b}
	hs := c.U16()
	c.Bytes(int(hs))
	if c.err != nil {
		return &FormatError{Offset: start, Msg: "metadata block header overruns its block"}
	}
	for c.Rest() > 0 {
		n := c.U16()
		row := c.Bytes(int(n))
		if c.err != nil {
			return &FormatError{Offset: start, Msg: "metadata row overruns its block"}
		}
		m, err := parseMetadataRowV6(row)
		if err != nil {
			return &FormatError{Offset: start, Msg: err.Error()}
		}
		r.defineMetadata(m, &r.fc)
	}
	return nil
}

func parseMetadataRowV6(row []byte) (*Metadata, error) {
	c := &Cursor{b: row}
	m := &Metadata{HasFields: true}
	id := c.Uvarint()
	m.Provider = c.UTF8()
	ev := c.Uvarint()
	m.EventName = c.UTF8()
	if c.err != nil {
		return nil, fmt.Errorf("metadata row: %w", c.err)
	}
	if id > math.MaxUint32 || ev > math.MaxUint32 {
		return nil, fmt.Errorf("metadata row: id %d or event id %d exceeds 32 bits", id, ev)
	}
	m.ID, m.EventID = uint32(id), uint32(ev)
	fields, err := parseV6Fields(c, 0)
	if err != nil {
		return nil, fmt.Errorf("metadata %d (%q): %w", m.ID, m.Provider, err)
	}
	m.Fields = fields
	if c.Rest() == 0 {
		return m, nil // optional metadata absent
	}
	n := c.U16()
	o := &Cursor{b: c.Bytes(int(n))}
	if c.err != nil {
		return nil, fmt.Errorf("metadata %d (%q): optional metadata overruns the row", m.ID, m.Provider)
	}
	for o.Rest() > 0 {
		switch kind := o.U8(); kind {
		case 1:
			m.Opcode = o.U8()
		case 3:
			m.Keywords = o.U64()
		case 4, 5: // message template, description
			o.UTF8()
		case 6: // key/value
			o.UTF8()
			o.UTF8()
		case 7: // provider GUID
			o.Bytes(16)
		case 8:
			m.Level = o.U8()
		case 9:
			m.Version = uint32(o.U8())
		default:
			return nil, fmt.Errorf("metadata %d (%q): unknown optional metadata kind %d", m.ID, m.Provider, kind)
		}
		if o.err != nil {
			return nil, fmt.Errorf("metadata %d (%q): optional metadata: %w", m.ID, m.Provider, o.err)
		}
	}
	return m, nil
}

func parseV6Fields(c *Cursor, depth int) ([]Field, error) {
	if depth > maxFieldDepth {
		return nil, errors.New("fields nested too deeply")
	}
	n := int(c.U16())
	if c.err != nil {
		return nil, fmt.Errorf("field count: %w", c.err)
	}
	if n*2 > c.Rest() {
		return nil, fmt.Errorf("field count %d exceeds the row", n)
	}
	fields := make([]Field, 0, n)
	for i := 0; i < n; i++ {
		size := c.U16()
		fc := &Cursor{b: c.Bytes(int(size))}
		if c.err != nil {
			return nil, fmt.Errorf("field %d overruns the row", i)
		}
		var f Field
		f.Name = fc.UTF8()
		if fc.err != nil {
			return nil, fmt.Errorf("field %d name: %w", i, fc.err)
		}
		t, err := parseV6Type(fc, depth)
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", f.Name, err)
		}
		f.Type = t
		fields = append(fields, f)
	}
	return fields, nil
}

func parseV6Type(c *Cursor, depth int) (FieldType, error) {
	var t FieldType
	if depth > maxFieldDepth {
		return t, errors.New("types nested too deeply")
	}
	t.Code = TypeCode(c.U8())
	if c.err != nil {
		return t, c.err
	}
	switch t.Code {
	case TypeArray, TypeFixedLengthArray, TypeRelLoc, TypeDataLoc:
		et, err := parseV6Type(c, depth+1)
		if err != nil {
			return t, err
		}
		t.Elem = &et
		if t.Code == TypeFixedLengthArray {
			t.FixedLen = int(c.U16())
		}
	case TypeObject:
		fs, err := parseV6Fields(c, depth+1)
		if err != nil {
			return t, err
		}
		t.Fields = fs
	default:
		if t.Code < TypeBoolean32 || t.Code > TypeBoolean8 {
			return t, fmt.Errorf("unknown type code %d", t.Code)
		}
	}
	return t, c.err
}

// spBlockV6 parses a V6 sequence point. Label lists end here; the thread
// and metadata tables too when the flags say so. References are resolved
// when events are parsed, so clearing now cannot affect queued events.
func (r *Reader) spBlockV6(b []byte, start int64) error {
	c := &Cursor{b: b}
	c.U64() // timestamp
	flags := c.U32()
	n := c.U32()
	if c.err != nil {
		return &FormatError{Offset: start, Msg: "sequence point block shorter than 16 bytes"}
	}
	if int64(n)*2 > int64(c.Rest()) {
		return &FormatError{Offset: start, Msg: fmt.Sprintf("sequence point lists %d threads in %d bytes", n, len(b))}
	}
	sp := &spState{threads: make([]spThread, n)}
	for i := range sp.threads {
		idx, seq := c.Uvarint(), c.Uvarint()
		if c.err != nil {
			return &FormatError{Offset: start, Msg: fmt.Sprintf("sequence point thread %d: %v", i, c.err)}
		}
		sp.threads[i] = spThread{capture: idx, seq: uint32(seq)}
	}
	clear(r.v6.labels)
	if flags&1 != 0 {
		clear(r.v6.threads)
		r.v6.cacheOK = false
	}
	if flags&2 != 0 {
		r.drain()
		clear(r.metas)
		r.metas = r.metas[:0]
		r.metaMap = nil
		clear(r.v6.overrides)
	}
	r.fc.sps++
	r.resetStacks()
	return r.emit(item{kind: itemSP, sp: sp})
}

// threadBlockV6 parses thread rows: size, index, then tagged items.
func (r *Reader) threadBlockV6(b []byte, start int64) error {
	c := &Cursor{b: b}
	for c.Rest() > 0 {
		n := c.U16()
		row := &Cursor{b: c.Bytes(int(n))}
		if c.err != nil {
			return &FormatError{Offset: start, Msg: "thread row overruns its block"}
		}
		idx := row.Uvarint()
		tid, hasTid := uint64(0), false
		for row.err == nil && row.Rest() > 0 {
			switch kind := row.U8(); kind {
			case 1: // name
				row.UTF8()
			case 2: // OS process id
				row.Uvarint()
			case 3:
				tid, hasTid = row.Uvarint(), true
			case 4: // key/value
				row.UTF8()
				row.UTF8()
			default:
				return &FormatError{Offset: start, Msg: fmt.Sprintf("thread %d: unknown thread info kind %d", idx, kind)}
			}
		}
		if row.err != nil {
			return &FormatError{Offset: start, Msg: fmt.Sprintf("thread row: %v", row.err)}
		}
		if hasTid {
			r.v6.threads[idx] = tid
			r.v6.cacheOK = false
		}
	}
	return nil
}

// removeThreadBlockV6 forgets removed thread indexes; the consumer checks
// their final sequence numbers (lost events) in stream order.
func (r *Reader) removeThreadBlockV6(b []byte, start int64) error {
	c := &Cursor{b: b}
	var rm []spThread
	for c.Rest() > 0 {
		idx, seq := c.Uvarint(), uint32(c.Uvarint())
		if c.err != nil {
			if len(rm) > 0 {
				r.emit(item{kind: itemRemoveThreads, sp: &spState{threads: rm}})
			}
			return &FormatError{Offset: start, Msg: fmt.Sprintf("remove-thread entry: %v", c.err)}
		}
		rm = append(rm, spThread{capture: idx, seq: seq})
		delete(r.v6.threads, idx)
		r.v6.cacheOK = false
	}
	if len(rm) == 0 {
		return nil
	}
	return r.emit(item{kind: itemRemoveThreads, sp: &spState{threads: rm}})
}

// labelListBlockV6 parses label lists: first index, count, then lists of
// kind-tagged labels, the last of each list marked by the kind's high bit.
func (r *Reader) labelListBlockV6(b []byte, start int64) error {
	c := &Cursor{b: b}
	first, n := c.U32(), c.U32()
	if c.err != nil {
		return &FormatError{Offset: start, Msg: "label list block shorter than 8 bytes"}
	}
	if int64(n) > int64(c.Rest()) {
		return &FormatError{Offset: start, Msg: fmt.Sprintf("label list block declares %d lists in %d bytes", n, c.Rest())}
	}
	for i := uint32(0); i < n; i++ {
		var lb v6Label
		for {
			kind := c.U8()
			switch kind & 0x7F {
			case 1:
				copy(lb.act[:], c.Bytes(16))
			case 2:
				copy(lb.rel[:], c.Bytes(16))
			case 3: // trace id
				c.Bytes(16)
			case 4: // span id
				c.U64()
			case 5: // string key/value
				c.UTF8()
				c.UTF8()
			case 6: // varint key/value
				c.UTF8()
				c.Uvarint()
			case 7:
				lb.opcode = c.U8()
				lb.has |= labelHasOpcode
			case 8:
				lb.keywords = c.U64()
				lb.has |= labelHasKeywords
			case 9:
				lb.level = c.U8()
				lb.has |= labelHasLevel
			case 10:
				lb.version = c.U8()
				lb.has |= labelHasVersion
			default:
				if c.err == nil {
					return &FormatError{Offset: start, Msg: fmt.Sprintf("label list %d: unknown label kind %d", first+i, kind&0x7F)}
				}
			}
			if c.err != nil {
				return &FormatError{Offset: start, Msg: fmt.Sprintf("label list %d: %v", first+i, c.err)}
			}
			if kind&0x80 != 0 {
				break
			}
		}
		r.v6.labels[first+i] = lb
	}
	return nil
}
