package report

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"

	"github.com/clrspy/clrspy/gcpause"
)

// The page's retired GC rows (every GC of a file but the last
// retiredGCsAfter) go to an unlinked temporary file in chunks, column by
// column, as GCSpool does for `clrspy gc --json`: on a 1 GiB trace they
// were 11 MB of the report's live heap, and they are only read once, when
// the page is written. GCColumns.spool holds them; the columns in memory
// are the rows after them.

// pageSpoolChunk is how many rows a GCColumns keeps before it spools them
// (a variable for the tests).
var pageSpoolChunk = 4096

// gcColSpool is the spooled rows of a GCColumns: chunks, each its columns
// one after the other, as little-endian values (4 bytes for a uint32
// column, 8 for the others).
type gcColSpool struct {
	spoolFile
	chunks  []int // rows per chunk
	offs    []int64
	size    int64
	rows    int
	reasons map[uint32]bool // the Reason codes spooled
}

// gcLeaves lists the columns of c in JSON order: its fields, and each
// array field's elements, with their JSON names (an array's elements have
// none).
type gcLeaf struct {
	name  string // "" for an array element
	field int
	elem  int // -1: the field itself
	n     int // elements in the array field (0: not an array)
}

var gcLeafList = func() []gcLeaf {
	t := reflect.TypeFor[GCColumns]()
	var ls []gcLeaf
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name := f.Tag.Get("json")
		if f.Type.Kind() == reflect.Array {
			for e := range f.Type.Len() {
				ls = append(ls, gcLeaf{name: name, field: i, elem: e, n: f.Type.Len()})
			}
			continue
		}
		ls = append(ls, gcLeaf{name: name, field: i, elem: -1})
	}
	return ls
}()

func (c *GCColumns) leaf(l gcLeaf) reflect.Value {
	v := reflect.ValueOf(c).Elem().Field(l.field)
	if l.elem >= 0 {
		v = v.Index(l.elem)
	}
	return v
}

func leafWidth(v reflect.Value) int64 {
	if v.Type().Elem().Kind() == reflect.Uint32 {
		return 4
	}
	return 8
}

// retiredGCsAfter is how many GC records a page's unbounded pause analysis
// keeps; older ones become page rows.
var retiredGCsAfter = 1024 // a variable for the tests

// RetireGCs returns o set to keep the recent GC records and hand the
// older ones to the returned rows (spooled in chunks), so a page of every
// GC holds no GC record past the recent ones (PageParts.RetiredGCs).
func RetireGCs(o gcpause.Options) (gcpause.Options, *GCColumns) {
	c := &GCColumns{}
	o.MaxGCs, o.OnRetire = retiredGCsAfter, c.appendSpooled
	return o, c
}

// appendSpooled adds g's row and spools the rows in memory once they are
// a chunk. If the spool cannot be written the rows stay in memory.
func (c *GCColumns) appendSpooled(g *gcpause.GC) {
	r := gcpause.NewGCRow(g)
	c.Append(&r)
	if len(c.Number) < pageSpoolChunk || (c.spool != nil && c.spool.err != nil) {
		return
	}
	if c.spool == nil {
		c.spool = &gcColSpool{reasons: map[uint32]bool{}}
	}
	c.spool.add(c)
}

// add writes the rows of c to the spool and empties c (keeping its
// arrays).
func (s *gcColSpool) add(c *GCColumns) {
	if !s.open("clrspy-page-*.spool") {
		return
	}
	n := len(c.Number) // the rows in memory
	var buf [8]byte
	for _, l := range gcLeafList {
		v := c.leaf(l)
		w := leafWidth(v)
		for i := range n {
			switch x := v.Index(i); x.Kind() {
			case reflect.Uint32:
				binary.LittleEndian.PutUint32(buf[:4], uint32(x.Uint()))
			case reflect.Int:
				binary.LittleEndian.PutUint64(buf[:], uint64(x.Int()))
			default:
				binary.LittleEndian.PutUint64(buf[:], math.Float64bits(x.Float()))
			}
			if _, err := s.w.Write(buf[:w]); err != nil {
				s.err = fmt.Errorf("spooling GC rows: %w", err)
				return
			}
		}
	}
	for _, r := range c.Reason {
		s.reasons[r] = true
	}
	s.chunks = append(s.chunks, n)
	s.offs = append(s.offs, s.size)
	s.size += int64(n) * gcRowBytes
	s.rows += n
	for _, l := range gcLeafList {
		v := c.leaf(l)
		v.SetLen(0)
	}
}

// gcRowBytes is one row's spooled bytes.
var gcRowBytes = func() int64 {
	var c GCColumns
	var n int64
	for _, l := range gcLeafList {
		n += leafWidth(c.leaf(l))
	}
	return n
}()

// writeJSON writes c as json.Marshal would write the columns of the
// spooled rows followed by those in memory.
func (c *GCColumns) writeJSON(w *bufio.Writer) error {
	s := c.spool
	if s == nil || s.rows == 0 {
		return writeStructStream(w, reflect.ValueOf(c).Elem(), 1)
	}
	if err := s.flush(); err != nil {
		return err
	}
	w.WriteByte('{')
	var raw []byte
	var num []byte
	skip := int64(0) // bytes of the leaves before this one, per row
	for li, l := range gcLeafList {
		if l.elem <= 0 {
			if li > 0 {
				w.WriteByte(',')
			}
			key, _ := json.Marshal(l.name)
			w.Write(key)
			w.WriteByte(':')
			if l.elem == 0 {
				w.WriteByte('[')
			}
		} else {
			w.WriteByte(',')
		}
		v := c.leaf(l)
		width := leafWidth(v)
		w.WriteByte('[')
		first := true
		for ci, n := range s.chunks {
			if need := int(int64(n) * width); cap(raw) < need {
				raw = make([]byte, need)
			} else {
				raw = raw[:need]
			}
			if _, err := s.f.ReadAt(raw, s.offs[ci]+skip*int64(n)); err != nil {
				return fmt.Errorf("reading spooled GC rows: %w", err)
			}
			for i := range n {
				if !first {
					w.WriteByte(',')
				}
				first = false
				num = num[:0]
				switch v.Type().Elem().Kind() {
				case reflect.Uint32:
					num = strconv.AppendUint(num, uint64(binary.LittleEndian.Uint32(raw[i*4:])), 10)
				case reflect.Int:
					num = strconv.AppendInt(num, int64(binary.LittleEndian.Uint64(raw[i*8:])), 10)
				default:
					num = appendNum(num, math.Float64frombits(binary.LittleEndian.Uint64(raw[i*8:])))
				}
				w.Write(num)
			}
		}
		for i := range v.Len() {
			if !first {
				w.WriteByte(',')
			}
			first = false
			num = num[:0]
			switch x := v.Index(i); x.Kind() {
			case reflect.Uint32:
				num = strconv.AppendUint(num, x.Uint(), 10)
			case reflect.Int:
				num = strconv.AppendInt(num, x.Int(), 10)
			default:
				num = appendNum(num, x.Float())
			}
			w.Write(num)
		}
		w.WriteByte(']')
		if l.n > 0 && l.elem == l.n-1 {
			w.WriteByte(']')
		}
		skip += width
	}
	return w.WriteByte('}')
}
