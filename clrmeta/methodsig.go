package clrmeta

import "strings"

// methodArgs writes a MethodDef signature's parameters the way the
// runtime's method events do ("(int32,class System.String,value class
// System.ReadOnlySpan`1<wchar>)"): the profiler's names of methods the
// events named and of those read from the file then agree. "" when the
// signature cannot be read.
func (t *tables) methodArgs(sig []byte) string {
	if len(sig) < 2 {
		return ""
	}
	b := sig[1:]
	if sig[0]&0x10 != 0 { // generic: the count of its parameters
		_, k := compressed(b)
		if k == 0 {
			return ""
		}
		b = b[k:]
	}
	n, k := compressed(b)
	if k == 0 || n > 1024 {
		return ""
	}
	b = b[k:]
	var sb strings.Builder
	var ok bool
	if b, ok = t.sigElem(b, &strings.Builder{}, 0); !ok { // the return type
		return ""
	}
	sb.WriteByte('(')
	for i := range n {
		if len(b) > 0 && b[0] == 0x41 { // SENTINEL
			b = b[1:]
		}
		if i > 0 {
			sb.WriteByte(',')
		}
		if b, ok = t.sigElem(b, &sb, 0); !ok {
			return ""
		}
	}
	sb.WriteByte(')')
	return sb.String()
}

var primNames = map[byte]string{0x01: "void", 0x02: "bool", 0x03: "wchar", 0x04: "int8", 0x05: "unsigned int8",
	0x06: "int16", 0x07: "unsigned int16", 0x08: "int32", 0x09: "unsigned int32", 0x0A: "int64",
	0x0B: "unsigned int64", 0x0C: "float32", 0x0D: "float64", 0x0E: "class System.String", 0x16: "typedbyref",
	0x18: "int", 0x19: "unsigned int", 0x1C: "class System.Object"}

// sigElem writes the type at the start of b and returns the rest.
func (t *tables) sigElem(b []byte, sb *strings.Builder, depth int) ([]byte, bool) {
	if len(b) == 0 || depth > 16 {
		return nil, false
	}
	e := b[0]
	b = b[1:]
	if s, ok := primNames[e]; ok {
		sb.WriteString(s)
		return b, true
	}
	var ok bool
	switch e {
	case 0x1F, 0x20: // custom modifiers: skipped
		_, k := compressed(b)
		if k == 0 {
			return nil, false
		}
		return t.sigElem(b[k:], sb, depth+1)
	case 0x45: // PINNED
		return t.sigElem(b, sb, depth+1)
	case 0x0F, 0x10: // PTR, BYREF
		if b, ok = t.sigElem(b, sb, depth+1); !ok {
			return nil, false
		}
		if e == 0x0F {
			sb.WriteByte('*')
		} else {
			sb.WriteByte('&')
		}
		return b, true
	case 0x1D: // SZARRAY
		if b, ok = t.sigElem(b, sb, depth+1); !ok {
			return nil, false
		}
		sb.WriteString("[]")
		return b, true
	case 0x14: // ARRAY: type, rank, sizes, lower bounds
		if b, ok = t.sigElem(b, sb, depth+1); !ok {
			return nil, false
		}
		var vals [3]uint32
		for i := range 3 {
			v, k := compressed(b)
			if k == 0 {
				return nil, false
			}
			b, vals[i] = b[k:], v
			if i == 0 {
				continue
			}
			for range v {
				_, k := compressed(b)
				if k == 0 {
					return nil, false
				}
				b = b[k:]
			}
			if i == 1 {
				// lower bounds follow their count
				v, k = compressed(b)
				if k == 0 {
					return nil, false
				}
				b = b[k:]
				for range v {
					_, k := compressed(b)
					if k == 0 {
						return nil, false
					}
					b = b[k:]
				}
				break
			}
		}
		sb.WriteByte('[')
		for i := uint32(1); i < vals[0] && i < 32; i++ {
			sb.WriteByte(',')
		}
		sb.WriteByte(']')
		return b, true
	case 0x13, 0x1E: // VAR, MVAR
		v, k := compressed(b)
		if k == 0 {
			return nil, false
		}
		if e == 0x13 {
			sb.WriteString("!")
		} else {
			sb.WriteString("!!")
		}
		sb.WriteString(itoa(v))
		return b[k:], true
	case 0x11, 0x12: // VALUETYPE, CLASS
		v, k := compressed(b)
		if k == 0 {
			return nil, false
		}
		if e == 0x11 {
			sb.WriteString("value class ")
		} else {
			sb.WriteString("class ")
		}
		sb.WriteString(t.sigTypeName(v))
		return b[k:], true
	case 0x15: // GENERICINST: CLASS or VALUETYPE, the type, its arguments
		if len(b) < 2 {
			return nil, false
		}
		if b[0] == 0x11 {
			sb.WriteString("value class ")
		} else {
			sb.WriteString("class ")
		}
		v, k := compressed(b[1:])
		if k == 0 {
			return nil, false
		}
		sb.WriteString(t.sigTypeName(v))
		b = b[1+k:]
		n, k := compressed(b)
		if k == 0 || n > 64 {
			return nil, false
		}
		b = b[k:]
		sb.WriteByte('<')
		for i := range n {
			if i > 0 {
				sb.WriteByte(',')
			}
			if b, ok = t.sigElem(b, sb, depth+1); !ok {
				return nil, false
			}
		}
		sb.WriteByte('>')
		return b, true
	case 0x1B: // FNPTR: a method signature of its own
		return nil, false
	}
	return nil, false
}

// sigTypeName is a TypeDefOrRef coded index's name as the runtime's
// signatures write it: a nested type by its own name alone.
func (t *tables) sigTypeName(v uint32) string {
	r := v >> 2
	switch v & 3 {
	case 0:
		name := t.str(t.col(tTypeDef, r, 1))
		if ns := t.str(t.col(tTypeDef, r, 2)); ns != "" {
			name = ns + "." + name
		}
		return name
	case 1:
		name := t.str(t.col(tTypeRef, r, 1))
		if ns := t.str(t.col(tTypeRef, r, 2)); ns != "" && t.col(tTypeRef, r, 0)&3 != 3 {
			name = ns + "." + name
		}
		return name
	}
	return "?"
}

func itoa(v uint32) string {
	var b [10]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			break
		}
	}
	return string(b[i:])
}
