package heapgraph

import (
	"strings"

	"github.com/clrspy/clrspy/clrmeta"
)

// unnamedPrefix starts the name the builder gives a type no BulkType
// event (nor KnownTypes) named: "Type(0x7f...)".
const unnamedPrefix = "Type(0x"

// UnnamedTypes counts the types no event named and their objects. The
// runtime names each type once while any session has its Type keyword
// on (ipc.Client.ResetTypeLog): types another session saw first come
// unnamed, and a report says so.
func (g *Graph) UnnamedTypes() (types, objects uint64) {
	unnamed := make([]bool, len(g.TypeNames))
	for i, n := range g.TypeNames {
		if strings.HasPrefix(n, unnamedPrefix) {
			unnamed[i] = true
			types++
		}
	}
	if types == 0 {
		return 0, 0
	}
	for _, t := range g.Type {
		if unnamed[t] {
			objects++
		}
	}
	return types, objects
}

// NameStatics names the classes of the static roots: the heap dump's
// GCBulkRootStaticVar gives a static's field name and its object's type,
// not the declaring class (dotnet/runtime's BulkStaticsLogger logs the
// object's TypeID; PerfView names such a root by the object's type, which
// is the class only by chance). read returns the static fields named in
// fields that the module file at path declares (clrmeta.Reader: the
// builder does no I/O); it is called once per module the events named
// (their IL paths). A root whose
// field one class declares, or one class declares with the object's type,
// is named Class.Field; others keep the field's name alone (a module not
// readable here: a trace from another machine). Call it before Graph.
func (b *Builder) NameStatics(read func(path string, fields map[string]bool) ([]clrmeta.StaticField, error)) {
	if len(b.statics) == 0 {
		return
	}
	want := map[string]bool{}
	for _, s := range b.statics {
		want[s.field] = true
	}
	seen := map[string]bool{}
	for _, p := range b.modules {
		if p == "" || seen[p] {
			continue
		}
		seen[p] = true
		fs, err := read(p, want)
		if err != nil {
			continue // the field keeps its name alone
		}
		if b.staticFields == nil {
			b.staticFields = map[string][]clrmeta.StaticField{}
		}
		for _, f := range fs {
			if f.Reference { // the statics the runtime reports as roots
				b.staticFields[f.Field] = append(b.staticFields[f.Field], f)
			}
		}
	}
}

// staticName is a static root's name: Class.Field when the modules'
// metadata (NameStatics) says which class declares it, else the field.
func (b *Builder) staticName(s staticRoot) string {
	cands := b.staticFields[s.field]
	if len(cands) == 0 {
		return s.field
	}
	if c, ok := oneClass(cands); ok {
		return c + "." + s.field
	}
	// Several classes declare a static of that name: the one declaring it
	// with the object's type.
	obj := ""
	if i, ok := b.typeOf[s.typeID]; ok {
		obj = b.typeNames[i]
	}
	if obj == "" {
		obj = b.known[s.typeID]
	}
	var match []clrmeta.StaticField
	for _, f := range cands {
		if obj != "" && f.FieldType == obj {
			match = append(match, f)
		}
	}
	if c, ok := oneClass(match); ok {
		return c + "." + s.field
	}
	return s.field
}

// oneClass returns the class when every field of fs has the same one.
func oneClass(fs []clrmeta.StaticField) (string, bool) {
	if len(fs) == 0 {
		return "", false
	}
	for _, f := range fs[1:] {
		if f.Class != fs[0].Class {
			return "", false
		}
	}
	return fs[0].Class, true
}
