package clrmeta

// TypeDefs names a module's type definitions by row number (the RID of a
// TypeDef token, as a MethodTable stores it).
type TypeDefs struct {
	t         *tables
	enclosing map[uint32]uint32
}

// OpenTypeDefs reads the metadata of the managed module at path.
func OpenTypeDefs(path string) (*TypeDefs, error) {
	md, err := readModule(path, metadata)
	if err != nil {
		return nil, err
	}
	enclosing := map[uint32]uint32{}
	for r := uint32(1); r <= md.rows[tNestedClass]; r++ {
		enclosing[md.col(tNestedClass, r, 0)] = md.col(tNestedClass, r, 1)
	}
	return &TypeDefs{t: md, enclosing: enclosing}, nil
}

// Len is the number of type definitions.
func (d *TypeDefs) Len() int { return int(d.t.rows[tTypeDef]) }

// Name is TypeDef row rid's full name as the runtime writes it
// (Namespace.Outer+Inner, a generic definition with its arity: List`1);
// "" when rid is not a row.
func (d *TypeDefs) Name(rid uint32) string {
	if rid == 0 || rid > d.t.rows[tTypeDef] {
		return ""
	}
	return d.t.typeDefName(rid, d.enclosing)
}

// Find is the row of the type named name (as Name writes it), 0 if none.
func (d *TypeDefs) Find(name string) uint32 {
	for r := uint32(1); r <= d.t.rows[tTypeDef]; r++ {
		if d.Name(r) == name {
			return r
		}
	}
	return 0
}
