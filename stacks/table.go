package stacks

import (
	"encoding/binary"
	"slices"
)

// Table keeps one copy of each distinct stack (its frames' IPs) with the
// timestamp it was first seen at, indexed in order of first appearance:
// the stack table of the analyses that count by stack (locks, threadpool,
// exceptions). The zero Table is empty and ready.
type Table struct {
	ids map[string]int32 // little-endian IPs → index
	key []byte           // reused for the lookup
	// Stacks and TS are by index: the frames, and the first timestamp.
	Stacks [][]uint64
	TS     []int64
}

// Reserve appends an entry no stack is interned as (the index of the
// empty stack, or of stacks folded past a limit) and returns its index.
func (t *Table) Reserve() int32 {
	t.Stacks = append(t.Stacks, nil)
	t.TS = append(t.TS, 0)
	return int32(len(t.Stacks) - 1)
}

// Intern returns stack's index, adding a copy stamped ts when it is new
// and the table holds fewer than limit entries (limit <= 0: no limit);
// ok is false for a new stack past the limit.
func (t *Table) Intern(stack []uint64, ts int64, limit int) (id int32, ok bool) {
	b := t.key[:0]
	for _, ip := range stack {
		b = binary.LittleEndian.AppendUint64(b, ip)
	}
	t.key = b
	if id, ok := t.ids[string(b)]; ok {
		return id, true
	}
	if limit > 0 && len(t.Stacks) >= limit {
		return 0, false
	}
	if t.ids == nil {
		t.ids = make(map[string]int32)
	}
	id = int32(len(t.Stacks))
	t.ids[string(b)] = id
	t.Stacks = append(t.Stacks, slices.Clone(stack))
	t.TS = append(t.TS, ts)
	return id, true
}
