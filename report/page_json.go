package report

import (
	"bufio"
	"encoding"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
)

// writeJSONStream writes v as json.Marshal would, but a struct's fields one
// at a time, down to depth levels of structs: the page's data is its
// columns (14 MB on a 1 GiB trace), and json.Marshal held it twice more at
// the report's peak (its growing buffer, then the copy it returns). A
// field below depth, or a struct json does not encode field by field (a
// Marshaler, embedded fields, options other than omitempty), is marshaled
// whole. TestPageJSONStreamIsMarshal holds the two equal.
func writeJSONStream(w *bufio.Writer, v reflect.Value, depth int) error {
	if v.Kind() == reflect.Pointer && !v.IsNil() && v.CanInterface() {
		if jw, ok := v.Interface().(jsonWriter); ok {
			return jw.writeJSON(w)
		}
	}
	if depth > 0 && streamable(v.Type()) {
		if v.Kind() == reflect.Pointer {
			if v.IsNil() {
				w.WriteString("null")
				return nil
			}
			v = v.Elem()
		}
		if v.Kind() == reflect.Struct && v.CanAddr() {
			return writeStructStream(w, v, depth)
		}
	}
	if writeNumbers(w, v) {
		return nil
	}
	if v.CanAddr() {
		v = v.Addr() // a field's pointer-receiver methods apply as they do inside the struct
	}
	b, err := json.Marshal(v.Interface())
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// jsonWriter is a value that writes its own JSON, as json.Marshal would
// write it (GCColumns with spooled rows).
type jsonWriter interface{ writeJSON(w *bufio.Writer) error }

// writeNumbers writes a numCol, a slice of integers or an array of
// either, value by value, as json.Marshal would (it builds each whole, and
// the flame graph's run columns are a million values on a 1 GiB trace); it
// says false for any other value.
func writeNumbers(w *bufio.Writer, v reflect.Value) bool {
	t := v.Type()
	if t == reflect.TypeFor[numCol]() {
		w.WriteByte('[')
		for i := range v.Len() {
			if i > 0 {
				w.WriteByte(',')
			}
			w.Write(appendNum(w.AvailableBuffer(), v.Index(i).Float()))
		}
		w.WriteByte(']')
		return true
	}
	if t.Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(jsonMarshaler) ||
		t.Implements(textMarshaler) || reflect.PointerTo(t).Implements(textMarshaler) {
		return false
	}
	switch t.Kind() {
	case reflect.Array, reflect.Slice:
		// Arrays of numbers or numCols, slices of numbers.
		slice := t.Kind() == reflect.Slice
		if et := t.Elem(); !intKind(et) && (slice || et != reflect.TypeFor[numCol]()) {
			return false
		}
		if slice && v.IsNil() {
			w.WriteString("null")
			return true
		}
		w.WriteByte('[')
		for i := range v.Len() {
			if i > 0 {
				w.WriteByte(',')
			}
			writeNumbers(w, v.Index(i))
		}
		w.WriteByte(']')
		return true
	}
	if !intKind(t) {
		return false
	}
	if v.CanInt() {
		w.Write(strconv.AppendInt(w.AvailableBuffer(), v.Int(), 10))
	} else {
		w.Write(strconv.AppendUint(w.AvailableBuffer(), v.Uint(), 10))
	}
	return true
}

// intKind says whether json writes t's values as plain integers ([]byte is
// base64; a type with methods of its own may marshal itself).
func intKind(t reflect.Type) bool {
	if t.Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(jsonMarshaler) ||
		t.Implements(textMarshaler) || reflect.PointerTo(t).Implements(textMarshaler) {
		return false
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

// streamable says whether t is a struct, or a pointer to one, whose fields
// json encodes one by one under their plain tags.
func streamable(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		if t.Implements(jsonMarshaler) || t.Implements(textMarshaler) {
			return false
		}
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return false
	}
	pt := reflect.PointerTo(t)
	if pt.Implements(jsonMarshaler) || pt.Implements(textMarshaler) {
		return false
	}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			return false
		}
		if _, opts, _ := strings.Cut(f.Tag.Get("json"), ","); opts != "" && opts != "omitempty" {
			return false
		}
	}
	return true
}

func writeStructStream(w *bufio.Writer, v reflect.Value, depth int) error {
	t := v.Type()
	w.WriteByte('{')
	first := true
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		fv := v.Field(i)
		if opts == "omitempty" && emptyJSON(fv) {
			continue
		}
		if !first {
			w.WriteByte(',')
		}
		first = false
		key, err := json.Marshal(name)
		if err != nil {
			return err
		}
		w.Write(key)
		w.WriteByte(':')
		if err := writeJSONStream(w, fv, depth-1); err != nil {
			return err
		}
	}
	return w.WriteByte('}')
}

// emptyJSON is encoding/json's omitempty test.
func emptyJSON(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool:
		return !v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return v.Uint() == 0
	case reflect.Float32, reflect.Float64:
		return v.Float() == 0
	case reflect.Interface, reflect.Pointer:
		return v.IsNil()
	}
	return false
}
