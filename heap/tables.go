package heap

import (
	"fmt"
	"slices"

	"github.com/clrspy/clrspy/nettrace"
)

// tables intern what objects share: types, stacks and the (type, stack)
// tallies. Each is bounded by Options; what does not fit goes to an entry
// that says so, never to another type or stack.
type tables struct {
	// types are (TypeID, name given by the allocation event) pairs; an
	// empty name is resolved through names when the result is made.
	types   []typeKey
	typeIdx map[typeKey]int32
	// rawType caches, per TypeID, the last raw UTF-16 name seen with it and
	// its entry, so an allocation event costs a compare, not a decode.
	rawType map[uint64]rawName
	// names are BulkType's (and the allocation events') TypeID → name.
	names map[uint64]string

	stacks   [][]uint64
	stackIdx map[uint64]int32 // by hash of the frames

	tallies   []tally
	tallyKeys []tallyKey
	tallyIdx  map[tallyKey]int32

	ages [nAgeBuckets]float64
}

type typeKey struct {
	id   uint64
	name string
}

type rawName struct {
	raw string
	ty  int32
}

type tallyKey struct{ ty, stack int32 }

// typeNotKept is the type entry of objects whose type came when the type
// table was full.
const typeNotKept = 0

const typeNotKeptName = "[type not kept: table full]"

func (t *tables) init() {
	t.typeIdx = make(map[typeKey]int32)
	t.rawType = make(map[uint64]rawName)
	t.names = make(map[uint64]string)
	t.stackIdx = make(map[uint64]int32)
	t.tallyIdx = make(map[tallyKey]int32)
	t.types = append(t.types, typeKey{name: typeNotKeptName})
}

// typeOf interns a type by id and the name its allocation event gave.
func (t *Tracker) typeOf(id uint64, name string) int32 {
	k := typeKey{id, name}
	if i, ok := t.typeIdx[k]; ok {
		return i
	}
	if t.maxTypes > 0 && len(t.types) > t.maxTypes {
		return typeNotKept
	}
	if name != "" && id != 0 {
		if _, ok := t.names[id]; !ok {
			t.nameType(id, name)
		}
	}
	i := int32(len(t.types))
	t.types = append(t.types, k)
	t.typeIdx[k] = i
	return i
}

// typeOfRaw is typeOf for a name still in UTF-16 (NUL included).
func (t *Tracker) typeOfRaw(id uint64, raw []byte) int32 {
	if c, ok := t.rawType[id]; ok && c.raw == string(raw) {
		return c.ty
	}
	name, _, _ := nettrace.DecodeUTF16Z(raw)
	ty := t.typeOf(id, name)
	if ty != typeNotKept {
		t.rawType[id] = rawName{string(raw), ty}
	}
	return ty
}

// nameType records a type's name (BulkType).
func (t *Tracker) nameType(id uint64, name string) {
	if _, ok := t.names[id]; !ok && t.maxTypes > 0 && len(t.names) >= t.maxTypes {
		t.stats.TypeNamesNotKept++
		return
	}
	t.names[id] = name
}

// typeNames resolves every type entry's name.
func (t *Tracker) typeNames() []string {
	out := make([]string, len(t.types))
	for i, k := range t.types {
		switch {
		case i == typeNotKept:
			out[i] = typeNotKeptName
		case k.name != "":
			out[i] = k.name
		default:
			if n, ok := t.names[k.id]; ok {
				out[i] = n
			} else {
				out[i] = fmt.Sprintf("type 0x%x", k.id)
			}
		}
	}
	return out
}

// internStack returns a stack's index: -1 for none, StackNotKept when it
// is new and the table is full. The index is keyed by a hash of the frames
// (probing on a collision), so a stack is stored once, not also as a key.
func (t *Tracker) internStack(s []uint64) int {
	if len(s) == 0 {
		return -1
	}
	h := uint64(len(s))
	for _, ip := range s {
		h = (h ^ ip) * 0x100000001b3
		h ^= h >> 29
	}
	for {
		i, ok := t.stackIdx[h]
		if !ok {
			break
		}
		if slices.Equal(t.stacks[i], s) {
			return int(i)
		}
		h = h*0x9E3779B97F4A7C15 + 1
	}
	if t.maxStacks > 0 && len(t.stacks) >= t.maxStacks {
		return StackNotKept
	}
	i := len(t.stacks)
	t.stacks = append(t.stacks, slices.Clone(s))
	t.stackIdx[h] = int32(i)
	return i
}

// tallyOf returns the tally of a (type, stack) pair. Past 2·MaxStacks
// tallies (a stack allocates one or two types, as a rule), a new pair is
// tallied under its type with StackNotKept, which the types bound.
func (t *Tracker) tallyOf(ty, stack int32) int32 {
	k := tallyKey{ty, stack}
	if i, ok := t.tallyIdx[k]; ok {
		return i
	}
	if t.maxStacks > 0 && len(t.tallies) >= 2*t.maxStacks && stack != StackNotKept {
		t.stats.StacksNotKept++
		return t.tallyOf(ty, StackNotKept)
	}
	i := int32(len(t.tallies))
	t.tallies = append(t.tallies, tally{})
	t.tallyKeys = append(t.tallyKeys, k)
	t.tallyIdx[k] = i
	return i
}
