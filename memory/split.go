package memory

import (
	"sort"
	"strings"

	"github.com/clrspy/clrspy/internal/procfs"
)

// Kind names a part of a process's memory; the values are the JSON kinds.
type Kind string

// The parts, in the order reports list them.
const (
	GCHeap        Kind = "gc_heap"        // the GC's regions (or segments): objects, free space it keeps committed
	GCBookkeeping Kind = "gc_bookkeeping" // card table, brick table, mark array: the GC's reservation below its regions
	JITCode       Kind = "jit_code"       // executable runtime memory: JIT-compiled code, stubs
	Loader        Kind = "loader"         // the runtime's other reservations: loader heaps, the writable views of code heaps
	NativeHeap    Kind = "native_heap"    // malloc: the [heap] and glibc's arenas
	Stacks        Kind = "stacks"         // thread stacks
	Images        Kind = "images"         // mapped files: assemblies, R2R code, native libraries (with their .bss)
	Other         Kind = "other"          // anonymous memory no part claims (large malloc blocks, native libraries' own mmaps), shared memory
)

// Kinds lists every kind in report order.
var Kinds = []Kind{GCHeap, GCBookkeeping, JITCode, Loader, NativeHeap, Stacks, Images, Other}

// Label is a kind's name for text reports.
func (k Kind) Label() string {
	switch k {
	case GCHeap:
		return "GC heap"
	case GCBookkeeping:
		return "GC bookkeeping"
	case JITCode:
		return "JIT code"
	case Loader:
		return "loader heaps"
	case NativeHeap:
		return "native heap"
	case Stacks:
		return "thread stacks"
	case Images:
		return "mapped images"
	}
	return "other"
}

// Part is one kind's resident bytes.
type Part struct {
	Kind     Kind
	Bytes    uint64 // resident (RSS)
	Pss      uint64 // proportional share
	Uss      uint64 // private to the process (Private_Clean + Private_Dirty)
	Mappings int
}

// Image is one mapped file's resident bytes.
type Image struct {
	Path  string
	Bytes uint64
}

// GC range sources.
const (
	FoundByRuntime = "runtime" // holds addresses the runtime reported in its heap
	FoundByLayout  = "layout"  // the largest reservation of the runtime's kind, no code in it
)

// Split is a process's memory at one moment.
type Split struct {
	Rss, Pss, Uss, Swap uint64
	// Parts has every kind, in Kinds order; their Bytes add up to Rss
	// (their Pss to Pss, Uss to Uss).
	Parts []Part
	// Images are the mapped files, most resident first.
	Images []Image
	// GCStart, GCEnd bound the GC's reservation (bookkeeping and regions);
	// GCRegions is where its regions begin. Zero when none was found.
	GCStart, GCRegions, GCEnd uint64
	GCFoundBy                 string
	Mappings                  int
}

// Bytes is kind's resident bytes.
func (s *Split) Bytes(k Kind) uint64 {
	for _, p := range s.Parts {
		if p.Kind == k {
			return p.Bytes
		}
	}
	return 0
}

// Hints are what else is known of the process's addresses.
type Hints struct {
	// HeapAddresses lie in the GC heap: object addresses and region
	// starts the runtime reported (GCAllocationTick, GCGenerationRange).
	HeapAddresses []uint64
	// StackPointers are threads' stack pointers.
	StackPointers []uint64
}

// regionAlign: the GC's regions start at multiples of its region size (4
// MiB basic regions; segments are larger multiples).
const regionAlign = 4 << 20

// Classify gives every mapping of es (one process's smaps, in address
// order) to one part.
func Classify(es []procfs.SmapsEntry, h Hints) Split {
	es = sortedCopy(es)
	kinds := make([]Kind, len(es))
	s := Split{Mappings: len(es)}

	// Thread stacks and libraries' .bss first: one can sit right below
	// the GC's reservation, and must not be taken into it.
	for i := range es {
		if bssAt(es, i) {
			kinds[i] = Images
			continue
		}
		if stackAt(es, i, h.StackPointers) {
			kinds[i] = Stacks
			if i > 0 && guard(&es[i-1]) && es[i-1].End == es[i].Start {
				kinds[i-1] = Stacks
			}
		}
	}
	runs := anonRuns(es, kinds)
	gc := pickGCRun(es, runs, h.HeapAddresses)
	for ri, r := range runs {
		if !r.runtime {
			continue
		}
		for i := r.lo; i < r.hi; i++ {
			switch {
			case ri == gc:
				kinds[i] = GCBookkeeping
			case es[i].Exec():
				kinds[i] = JITCode
			default:
				kinds[i] = Loader
			}
		}
	}
	if gc >= 0 {
		r := runs[gc]
		s.GCStart, s.GCEnd = es[r.lo].Start, es[r.hi-1].End
		s.GCFoundBy = FoundByLayout
		if r.anchored > 0 {
			s.GCFoundBy = FoundByRuntime
		}
		s.GCRegions = regionsStart(es[r.lo:r.hi], h.HeapAddresses)
		for i := r.lo; i < r.hi; i++ {
			if es[i].Start >= s.GCRegions {
				kinds[i] = GCHeap
			}
		}
	}
	for i := range es {
		if kinds[i] != "" {
			continue
		}
		kinds[i] = classifyOne(es, i)
	}

	parts := map[Kind]*Part{}
	for _, k := range Kinds {
		parts[k] = &Part{Kind: k}
	}
	images := map[string]uint64{}
	for i := range es {
		e := &es[i]
		p := parts[kinds[i]]
		p.Bytes += e.Rss
		p.Pss += e.Pss
		p.Uss += e.PrivateClean + e.PrivateDirty
		p.Mappings++
		s.Rss += e.Rss
		s.Pss += e.Pss
		s.Uss += e.PrivateClean + e.PrivateDirty
		s.Swap += e.Swap
		if kinds[i] == Images && e.Rss > 0 {
			images[imageOf(es, i)] += e.Rss
		}
	}
	for _, k := range Kinds {
		s.Parts = append(s.Parts, *parts[k])
	}
	for p, b := range images {
		s.Images = append(s.Images, Image{Path: p, Bytes: b})
	}
	sort.Slice(s.Images, func(i, j int) bool {
		if s.Images[i].Bytes != s.Images[j].Bytes {
			return s.Images[i].Bytes > s.Images[j].Bytes
		}
		return s.Images[i].Path < s.Images[j].Path
	})
	return s
}

func sortedCopy(es []procfs.SmapsEntry) []procfs.SmapsEntry {
	out := append([]procfs.SmapsEntry(nil), es...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	return out
}

// anonymous: private memory of no file and no name.
func anonymous(e *procfs.SmapsEntry) bool {
	return e.Path == "" && e.Inode == 0 && len(e.Perms) == 4 && e.Perms[3] == 'p'
}

// mallocArena: glibc reserves its arenas (64 MiB each) with
// MAP_NORESERVE; nothing else in a .NET process does.
func mallocArena(e *procfs.SmapsEntry) bool { return anonymous(e) && e.HasFlag("nr") }

func doubleMapped(e *procfs.SmapsEntry) bool { return strings.HasPrefix(e.Path, "/memfd:doublemapper") }

// run is a stretch of adjacent anonymous mappings, es[lo:hi].
type run struct {
	lo, hi int
	// runtime: it holds a reservation the runtime made (its PAL marks
	// reserved, uncommitted memory MADV_DONTDUMP: VmFlags "dd").
	runtime  bool
	size     uint64
	code     bool // executable memory in it, or beside a code heap's double mapping
	anchored int  // heap addresses in it
}

func anonRuns(es []procfs.SmapsEntry, kinds []Kind) []run {
	var out []run
	for i := 0; i < len(es); {
		if !anonymous(&es[i]) || mallocArena(&es[i]) || kinds[i] != "" {
			i++
			continue
		}
		r := run{lo: i}
		j := i
		for ; j < len(es); j++ {
			e := &es[j]
			if !anonymous(e) || mallocArena(e) || kinds[j] != "" || (j > i && e.Start != es[j-1].End) {
				break
			}
			if e.HasFlag("dd") && e.Perms == "---p" {
				r.runtime = true
			}
			if e.Exec() {
				r.code = true
			}
		}
		r.hi = j
		r.size = es[j-1].End - es[i].Start
		if i > 0 && es[i-1].End == es[i].Start && doubleMapped(&es[i-1]) {
			r.code = true
		}
		if j < len(es) && es[j].Start == es[j-1].End && doubleMapped(&es[j]) {
			r.code = true
		}
		out = append(out, r)
		i = j
	}
	return out
}

// pickGCRun is the index of the run that holds the GC's reservation: the
// one with most of the runtime's heap addresses, else the largest runtime
// reservation with no code in it or beside it (the executable-memory
// reserve is next to its double mappings); -1 when none.
func pickGCRun(es []procfs.SmapsEntry, runs []run, addrs []uint64) int {
	best := -1
	for ri := range runs {
		r := &runs[ri]
		if !r.runtime {
			continue
		}
		lo, hi := es[r.lo].Start, es[r.hi-1].End
		for _, a := range addrs {
			if a >= lo && a < hi {
				r.anchored++
			}
		}
		if r.anchored > 0 && (best < 0 || r.anchored > runs[best].anchored) {
			best = ri
		}
	}
	if best >= 0 {
		return best
	}
	for ri := range runs {
		r := &runs[ri]
		if !r.runtime || r.code {
			continue
		}
		if best < 0 || r.size > runs[best].size {
			best = ri
		}
	}
	return best
}

// regionsStart is where the GC's regions begin in its reservation es: the
// lowest committed, region-aligned mapping (the first region is
// committed at the start of the regions range; the bookkeeping below it
// is not aligned so), or lower when the runtime reported a heap address
// below it.
func regionsStart(es []procfs.SmapsEntry, addrs []uint64) uint64 {
	start := es[len(es)-1].End
	for i := range es {
		if es[i].Perms != "---p" && es[i].Start%regionAlign == 0 {
			start = es[i].Start
			break
		}
	}
	lo, hi := es[0].Start, es[len(es)-1].End
	for _, a := range addrs {
		if a >= lo && a < hi {
			if r := a &^ (regionAlign - 1); r < start {
				start = max(r, lo)
			}
		}
	}
	return start
}

// classifyOne gives a mapping outside the runtime's reservations its part.
func classifyOne(es []procfs.SmapsEntry, i int) Kind {
	e := &es[i]
	switch {
	case e.Path == "[heap]":
		return NativeHeap
	case e.Path == "[vdso]" || e.Path == "[vvar]" || e.Path == "[vvar_vclock]":
		return Images
	case doubleMapped(e):
		if e.Exec() {
			return JITCode
		}
		return Loader
	case mallocArena(e):
		return NativeHeap
	case e.Inode != 0 && strings.HasPrefix(e.Path, "/") && !strings.HasPrefix(e.Path, "/memfd:") &&
		!strings.HasPrefix(e.Path, "/dev/shm/") && !strings.HasPrefix(e.Path, "/SYSV"):
		return Images
	case !anonymous(e):
		return Other
	}
	return Other
}

// bssAt reports whether es[i] is a library's .bss: anonymous and
// writable, right after the library's writable data.
func bssAt(es []procfs.SmapsEntry, i int) bool {
	if i == 0 || !anonymous(&es[i]) || !strings.HasPrefix(es[i].Perms, "rw") {
		return false
	}
	prev := &es[i-1]
	return prev.End == es[i].Start && prev.Inode != 0 && strings.HasPrefix(prev.Path, "/") &&
		!strings.HasPrefix(prev.Path, "/memfd:") && strings.HasPrefix(prev.Perms, "rw")
}

// guard: an inaccessible anonymous page or more below a thread stack,
// neither the runtime's reservation (dd) nor malloc's (nr).
func guard(e *procfs.SmapsEntry) bool {
	return anonymous(e) && e.Perms == "---p" && !e.HasFlag("dd") && !e.HasFlag("nr") && e.Size() <= 1<<20
}

// stackAt reports whether es[i] is a thread stack: the [stack], one that
// holds a thread's stack pointer, or writable anonymous memory right
// above a guard.
func stackAt(es []procfs.SmapsEntry, i int, sps []uint64) bool {
	e := &es[i]
	if e.Path == "[stack]" {
		return true
	}
	if !anonymous(e) || !strings.HasPrefix(e.Perms, "rw") {
		return false
	}
	for _, sp := range sps {
		if sp >= e.Start && sp < e.End {
			return true
		}
	}
	return i > 0 && es[i-1].End == e.Start && guard(&es[i-1])
}

// imageOf names the file a mapping (or a .bss right after one) belongs to.
func imageOf(es []procfs.SmapsEntry, i int) string {
	if es[i].Path != "" {
		return es[i].Path
	}
	if i > 0 {
		return es[i-1].Path
	}
	return "[anonymous]"
}
