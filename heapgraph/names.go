package heapgraph

import (
	"slices"
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

// staticNames names the static roots in b.statics' order: Class.Field
// when the modules' metadata (NameStatics) says which class declares the
// field, else the field alone. A field one class declares is that class's;
// of several, the one declared with the object's type; still several, the
// one the runtime's order puts there: it logs statics module by module,
// class by class in metadata order, field by field (BulkStaticsLogger),
// so a static between two others resolved in one module lies between
// them in that module's order. (Compiler-made names such as a closure
// class's <>9 are declared by many classes with the same type: the order
// names them.)
func (b *Builder) staticNames() []string {
	names := make([]string, len(b.statics))
	pick := make([]int, len(b.statics)) // index into the field's candidates, -1 none
	for i, s := range b.statics {
		pick[i] = -1
		cands := b.staticFields[s.field]
		if len(cands) == 0 {
			continue
		}
		if oneClass(cands) {
			pick[i] = 0
			continue
		}
		obj := ""
		if t, ok := b.typeOf[s.typeID]; ok {
			obj = b.typeNames[t]
		}
		if obj == "" {
			obj = b.known[s.typeID]
		}
		match := -1
		for j, f := range cands {
			if obj != "" && f.FieldType == obj {
				if match >= 0 && cands[match].Class != f.Class {
					match = -2 // several classes
					break
				}
				if match == -1 {
					match = j
				}
			}
		}
		if match >= 0 {
			pick[i] = match
		}
	}
	// By order: between the resolved statics before and after it, in
	// one module.
	var prev *clrmeta.StaticField
	for i, s := range b.statics {
		if pick[i] >= 0 {
			prev = &b.staticFields[s.field][pick[i]]
			continue
		}
		cands := b.staticFields[s.field]
		if prev == nil || len(cands) == 0 {
			continue
		}
		var next *clrmeta.StaticField
		for k := i + 1; k < len(b.statics); k++ {
			if pick[k] >= 0 {
				next = &b.staticFields[b.statics[k].field][pick[k]]
				break
			}
		}
		if next == nil || next.Module != prev.Module {
			continue
		}
		found := -1
		for j, f := range cands {
			if f.Module == prev.Module && f.Order > prev.Order && f.Order < next.Order {
				if found >= 0 {
					found = -2
					break
				}
				found = j
			}
		}
		if found >= 0 {
			pick[i] = found
			prev = &cands[found]
		}
	}
	for i, s := range b.statics {
		names[i] = s.field
		if pick[i] >= 0 {
			names[i] = b.staticFields[s.field][pick[i]].Class + "." + s.field
		}
	}
	return names
}

// oneClass reports whether every field of fs has the same class.
func oneClass(fs []clrmeta.StaticField) bool {
	for _, f := range fs[1:] {
		if f.Class != fs[0].Class {
			return false
		}
	}
	return true
}

// NameStatics renames the static roots of a graph read from a .gcdump
// file. dotnet-gcdump and PerfView name a static root "[static var
// T.Field]" with T the TypeID the event gives, taking it for the class;
// it is the object's type (the workload's Graph.Holder comes as
// "Workload.GraphHolder.Holder"). A root so named whose field a module of
// the file's types declares (read, as in Builder.NameStatics) in one
// class, or in one class with type T, is renamed Class.Field; others keep
// their name.
func (g *Graph) NameStatics(read func(path string, fields map[string]bool) ([]clrmeta.StaticField, error)) {
	type ref struct {
		root       int
		field, obj string
	}
	var refs []ref
	want := map[string]bool{}
	for i, r := range g.Roots {
		if r.Kind != RootStatic && r.Kind != RootThreadStatic {
			continue
		}
		obj := g.TypeName(r.Object)
		if f, ok := strings.CutPrefix(r.Name, obj+"."); ok && f != "" {
			refs = append(refs, ref{i, f, obj})
			want[f] = true
		}
	}
	if len(refs) == 0 {
		return
	}
	cands := map[string][]clrmeta.StaticField{}
	seen := map[string]bool{}
	for _, p := range g.TypeModules {
		if p == "" || seen[p] {
			continue
		}
		seen[p] = true
		fs, err := read(p, want)
		if err != nil {
			continue
		}
		for _, f := range fs {
			if f.Reference {
				cands[f.Field] = append(cands[f.Field], f)
			}
		}
	}
	for _, r := range refs {
		cs := cands[r.field]
		if len(cs) > 1 && !oneClass(cs) {
			cs = slices.DeleteFunc(slices.Clone(cs), func(f clrmeta.StaticField) bool { return f.FieldType != r.obj })
		}
		if len(cs) > 0 && oneClass(cs) {
			g.Roots[r.root].Name = cs[0].Class + "." + r.field
		}
	}
}
