package cdac

import (
	"errors"
	"fmt"

	"github.com/clrspy/clrspy/clrmeta"
)

// The FieldDesc the descriptor does not carry (field.h, .NET 9 and 10):
// the enclosing MethodTable, then a DWORD of the field's metadata row
// (24 bits) and flags, then one of its offset (27 bits) and element type.
const (
	fieldDescSize          = 16
	fieldDescStatic        = 1 << 24
	fieldDescThreadLocal   = 1 << 25
	fieldDescRVA           = 1 << 26
	fieldDescFullMb        = 1 << 30
	fieldDescRidMask       = 1<<24 - 1
	fieldDescOffsetMask    = 1<<27 - 1
	fieldDescTypeShift     = 27
	mtFlags2DynamicStatics = 0x2
	maxAssemblies          = 1 << 14
	maxStaticFields        = 1 << 12
	// elementClass .. are the CorElementTypes of reference fields.
	elementString, elementClass, elementArray, elementObject, elementSzArray = 0x0e, 0x12, 0x14, 0x1c, 0x1d
)

// modulesList reads the modules of the app domain's assemblies.
func (p *Process) modulesList() ([]uint64, error) {
	ad, err := p.globalPtr("AppDomain")
	if err != nil {
		return nil, err
	}
	if ad == 0 {
		return nil, errors.New("the runtime has no app domain yet")
	}
	listOff, err := p.D.MustField("AppDomain", "DomainAssemblyList")
	if err != nil {
		return nil, err
	}
	modOff, err := p.D.MustField("Assembly", "Module")
	if err != nil {
		return nil, err
	}
	count, err := p.U32(ad + uint64(listOff))
	if err != nil {
		return nil, err
	}
	first, _ := p.D.Field("ArrayListBase", "FirstBlock")
	next, _ := p.D.Field("ArrayListBlock", "Next")
	size, _ := p.D.Field("ArrayListBlock", "Size")
	start, _ := p.D.Field("ArrayListBlock", "ArrayStart")
	block := ad + uint64(listOff) + uint64(first)
	var out []uint64
	for n := uint32(0); n < count && n < maxAssemblies && block != 0; {
		bs, err := p.U32(block + uint64(size))
		if err != nil || bs == 0 {
			break
		}
		for i := uint32(0); i < bs && n < count; i, n = i+1, n+1 {
			// Each entry points at the assembly's holder, whose first
			// field is the Assembly.
			h, err := p.Ptr(block + uint64(start) + uint64(i)*uint64(p.D.PtrSize))
			if err != nil || h == 0 {
				continue
			}
			a, err := p.Ptr(h)
			if err != nil || a == 0 {
				continue
			}
			if m, err := p.Ptr(a + uint64(modOff)); err == nil && m != 0 {
				out = append(out, m)
			}
		}
		if block, err = p.Ptr(block + uint64(next)); err != nil {
			break
		}
	}
	return out, nil
}

// classMethodTable finds the loaded MethodTable of the class named name
// (as clrmeta names TypeDefs: Namespace.Outer+Inner) among mods: its
// TypeDef row in each module's metadata, that row of the module's
// TypeDefToMethodTableMap. 0 when no module has it loaded.
func (p *Process) classMethodTable(mods []uint64, name string) (uint64, *moduleNames) {
	mapOff, ok := p.D.Field("Module", "TypeDefToMethodTableMap")
	if !ok {
		return 0, nil
	}
	table, _ := p.D.Field("ModuleLookupMap", "TableData")
	nextOff, _ := p.D.Field("ModuleLookupMap", "Next")
	countOff, _ := p.D.Field("ModuleLookupMap", "Count")
	maskOff, _ := p.D.Field("ModuleLookupMap", "SupportedFlagsMask")
	for _, mod := range mods {
		m := p.module(mod)
		if m.err != nil {
			continue
		}
		rid := m.defs.Find(name)
		if rid == 0 {
			continue
		}
		lm := mod + uint64(mapOff)
		mask, _ := p.Ptr(lm + uint64(maskOff))
		for idx, hops := uint64(rid), 0; lm != 0 && hops < 64; hops++ {
			c, err := p.U32(lm + uint64(countOff))
			if err != nil {
				break
			}
			if idx < uint64(c) {
				td, err := p.Ptr(lm + uint64(table))
				if err != nil || td == 0 {
					break
				}
				mt, err := p.Ptr(td + idx*uint64(p.D.PtrSize))
				if err == nil && mt&^mask != 0 {
					return mt &^ mask, m
				}
				break
			}
			idx -= uint64(c)
			if lm, err = p.Ptr(lm + uint64(nextOff)); err != nil {
				break
			}
		}
	}
	return 0, nil
}

// staticRefs reads the reference static fields of MethodTable mt: the
// value of each (an object address, 0 when null) by field row.
func (p *Process) staticRefs(mt uint64) (map[uint32]uint64, error) {
	d := p.D
	fl2, err := d.MustField("MethodTable", "MTFlags2")
	if err != nil {
		return nil, err
	}
	f2, err := p.U32(mt + uint64(fl2))
	if err != nil {
		return nil, err
	}
	if f2&mtFlags2DynamicStatics == 0 {
		return nil, nil // no statics
	}
	auxOff, err := d.MustField("MethodTable", "AuxiliaryData")
	if err != nil {
		return nil, err
	}
	dsi, ok := d.Types["DynamicStaticsInfo"]
	gcOff, ok2 := d.Field("DynamicStaticsInfo", "GCStatics")
	if !ok || !ok2 || dsi.Size == 0 {
		return nil, errors.New("the runtime's data descriptor has no DynamicStaticsInfo")
	}
	aux, err := p.Ptr(mt + uint64(auxOff))
	if err != nil || aux == 0 {
		return nil, fmt.Errorf("method table %#x: no auxiliary data", mt)
	}
	gc, err := p.Ptr(aux - uint64(dsi.Size) + uint64(gcOff))
	if err != nil {
		return nil, err
	}
	if m, ok := d.Globals["StaticsPointerMask"]; ok {
		gc &= m
	}
	if gc == 0 {
		return nil, nil // not initialized yet
	}
	eeOff, err := d.MustField("MethodTable", "EEClassOrCanonMT")
	if err != nil {
		return nil, err
	}
	ee, err := p.Ptr(mt + uint64(eeOff))
	if err != nil || ee&1 != 0 {
		return nil, fmt.Errorf("method table %#x: no EEClass of its own", mt)
	}
	listOff, err := d.MustField("EEClass", "FieldDescList")
	if err != nil {
		return nil, err
	}
	nInst, _ := d.Field("EEClass", "NumInstanceFields")
	nStat, _ := d.Field("EEClass", "NumStaticFields")
	list, err := p.Ptr(ee + uint64(listOff))
	if err != nil || list == 0 {
		return nil, err
	}
	b, err := p.read(ee+uint64(nInst), 2)
	if err != nil {
		return nil, err
	}
	inst := int(b[0]) | int(b[1])<<8
	if b, err = p.read(ee+uint64(nStat), 2); err != nil {
		return nil, err
	}
	stat := int(b[0]) | int(b[1])<<8
	n := min(inst+stat, maxStaticFields)
	// Introduced instance fields, then the statics: read them all, keep
	// this class's statics of reference type.
	raw, err := p.read(list, n*fieldDescSize)
	if err != nil {
		return nil, err
	}
	out := map[uint32]uint64{}
	for i := 0; i < n; i++ {
		e := raw[i*fieldDescSize:]
		owner := uint64(le32(e)) | uint64(le32(e[4:]))<<32
		w1, w2 := le32(e[8:]), le32(e[12:])
		if owner != mt || w1&fieldDescStatic == 0 || w1&(fieldDescThreadLocal|fieldDescRVA|fieldDescFullMb) != 0 {
			continue
		}
		switch w2 >> fieldDescTypeShift {
		case elementString, elementClass, elementArray, elementObject, elementSzArray:
		default:
			continue
		}
		v, err := p.Ptr(gc + uint64(w2&fieldDescOffsetMask))
		if err == nil {
			out[w1&fieldDescRidMask] = v
		}
	}
	return out, nil
}

func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

// StaticHolders names, of objs, those a static field of one of classes
// (full names as clrmeta writes them: Namespace.Outer+Inner) holds now:
// "Class.Field" by object. Classes not loaded, or without statics, are
// skipped; the error is for a runtime whose structures cannot be read.
func (p *Process) StaticHolders(objs []uint64, classes []string) (map[uint64]string, error) {
	want := map[uint64]bool{}
	for _, o := range objs {
		want[o] = true
	}
	out := map[uint64]string{}
	if len(want) == 0 || len(classes) == 0 {
		return out, nil
	}
	mods, err := p.modulesList()
	if err != nil {
		return out, err
	}
	byPath := map[string][]clrmeta.StaticField{}
	for _, c := range classes {
		mt, m := p.classMethodTable(mods, c)
		if mt == 0 {
			continue
		}
		refs, err := p.staticRefs(mt)
		if err != nil || len(refs) == 0 {
			continue
		}
		fields, ok := byPath[m.opened]
		if !ok {
			fields, _ = clrmeta.StaticFields(m.opened, nil)
			byPath[m.opened] = fields
		}
		for _, f := range fields {
			if f.Class != c {
				continue
			}
			if v := refs[uint32(f.Order)]; want[v] && out[v] == "" {
				out[v] = c + "." + f.Field
			}
		}
	}
	return out, nil
}

// NameStatics opens pid's runtime and names objs by the static fields of
// classes that hold them (StaticHolders).
func NameStatics(pid int, objs []uint64, classes []string) (map[uint64]string, error) {
	p, err := Open(pid)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	return p.StaticHolders(objs, classes)
}
