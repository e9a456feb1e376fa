package metrics

// HeapGrowth is one type's growth between a target's last two automatic
// heap snapshots (serve --snapshot-on-gen2-growth).
type HeapGrowth struct {
	Type  string // the runtime's full type name
	Bytes int64  // own bytes of the type's live objects, after minus before
}

// MaxHeapGrowth bounds the types exported per target.
const MaxHeapGrowth = 10

var famHeapGrowth = &Family{Name: "clrspy_heap_growth_bytes", OTel: "clrspy.heap.growth", OTelUnit: "By", Kind: Gauge,
	Help:   "With serve --snapshot-on-gen2-growth: how much the live objects of each type grew (their own bytes) between the process's last two heap snapshots, taken when gen2 grew by the given percentage; the 10 types that grew most, replaced at each snapshot.",
	Labels: target(Label{"type", "code.type"})}

// The heap-growth family comes after the others in the exposition (as
// the thread pool's: a variable's initializer, before families.go's init).
var _ = func() bool {
	ownFamilies = append(ownFamilies, famHeapGrowth)
	return true
}()
