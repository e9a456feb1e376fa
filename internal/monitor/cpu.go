package monitor

import (
	"fmt"
	"slices"
	"sort"
	"unsafe"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/stacks"
)

// maxCPUWindowSec bounds Options.CPUWindow.
const maxCPUWindowSec = 300

// cpuWindow keeps the sample profiler's samples of the last secs seconds
// (event clock) as per-second counts of interned stacks. Stacks unseen for
// longer than the window are dropped and their slots reused, so memory
// follows the stacks of one window, not the session's length. Frames are
// named at Snapshot time with the shared symbol table.
type cpuWindow struct {
	hdr *nettrace.Header
	sym *stacks.Symbols
	// mappings gives the target's file mappings (nil: none); mapGen counts
	// the times they were read, so stacks with unknown frames resolve again.
	mappings func() []stacks.Mapping
	mapGen   int
	secs     int64

	idx    [2]map[string]int32 // managed, external: raw stack bytes → id
	stks   []cpuStack
	free   []int32
	frames frameTable

	buckets []cpuBucket // ring, one per second
	cur     int64       // current second (event clock)
	started bool
	total   int64 // samples ever
	st      analysis.Stats
	lastGC  int64 // second of the last sweep

	// Reused by profile: the call tree as a flat arena (node 0 is the
	// root), its edges, and scratch for the pruning cutoff.
	tree   []treeNode
	edges  map[uint64]int32 // parent<<32 | frame → node
	totals []int64
}

type treeNode struct {
	frame       int32
	parent      int32
	total, self int64
	out         *FlameNode // while materialising
}

type cpuStack struct {
	key      string // the idx key (over ips' bytes)
	used     bool
	ips      []uint64
	external bool
	first    int64 // ns: symbols are resolved as of this time
	lastSec  int64
	resolved []int32 // frame ids, root last (nil: not yet)
	symVer   int     // symVersion when resolved
	unknown  bool    // some frame did not resolve
}

type cpuBucket struct {
	sec    int64
	counts map[int32]int32
}

// newCPUWindow returns a window of secs seconds naming frames with sym
// (the monitor's, fed before the window).
func newCPUWindow(hdr *nettrace.Header, sym *stacks.Symbols, secs int) *cpuWindow {
	w := &cpuWindow{
		hdr: hdr, sym: sym, secs: int64(secs),
		idx: [2]map[string]int32{make(map[string]int32), make(map[string]int32)}, buckets: make([]cpuBucket, secs+1),
		frames: frameTable{idx: make(map[stacks.Frame]int32)},
		edges:  make(map[uint64]int32),
	}
	for i := range w.buckets {
		w.buckets[i] = cpuBucket{sec: -1, counts: make(map[int32]int32)}
	}
	return w
}

// Stats implements analysis.Analyzer.
func (w *cpuWindow) Stats() analysis.Stats { return w.st }

// Event implements analysis.Analyzer: the sampler's thread samples.
func (w *cpuWindow) Event(ev *nettrace.Event) {
	if ev.Meta.Runtime == nettrace.SampleProfiler {
		if ev.Meta.EventID != clrevents.IDThreadSample {
			return
		}
		s, err := clrevents.DecodeThreadSample(ev.Payload, ev.Meta.Version, w.hdr.PointerSize)
		if w.st.Failed(err) {
			return
		}
		w.st.Used()
		if s.Type != clrevents.SampleManaged && s.Type != clrevents.SampleExternal {
			return
		}
		w.sample(ev.Stack, s.Type == clrevents.SampleExternal, w.hdr.Nanos(ev.Timestamp))
	}
}

func (w *cpuWindow) sample(ips []uint64, external bool, ts int64) {
	sec := max(ts, 0) / 1e9
	w.advance(sec)
	id, ok := w.idx[typeIndex(external)][ipsKey(ips)]
	if !ok {
		id = w.intern(ips, external, ts)
	}
	w.stks[id].lastSec = max(w.stks[id].lastSec, sec)
	b := &w.buckets[sec%int64(len(w.buckets))]
	if b.sec != sec {
		// The slot's second fell out of the window.
		clear(b.counts)
		b.sec = sec
	}
	b.counts[id]++
	w.total++
}

func typeIndex(external bool) int {
	if external {
		return 1
	}
	return 0
}

// ipsKey views a stack's addresses as a string (no copy: for lookups, and
// for keys over a copy the window owns).
func ipsKey(ips []uint64) string {
	if len(ips) == 0 {
		return ""
	}
	return unsafe.String((*byte)(unsafe.Pointer(&ips[0])), len(ips)*8)
}

func (w *cpuWindow) intern(ips []uint64, external bool, ts int64) int32 {
	cp := append([]uint64(nil), ips...)
	st := cpuStack{used: true, key: ipsKey(cp), ips: cp, external: external, first: ts}
	var id int32
	if n := len(w.free); n > 0 {
		id = w.free[n-1]
		w.free = w.free[:n-1]
		w.stks[id] = st
	} else {
		id = int32(len(w.stks))
		w.stks = append(w.stks, st)
	}
	w.idx[typeIndex(external)][st.key] = id
	return id
}

// advance moves the clock to second sec and now and then drops the
// stacks no bucket of the window holds.
func (w *cpuWindow) advance(sec int64) {
	if !w.started {
		w.cur, w.lastGC, w.started = sec, sec, true
	}
	if sec <= w.cur {
		return
	}
	w.cur = sec
	if sec-w.lastGC >= w.secs {
		w.lastGC = sec
		w.sweep()
	}
}

func (w *cpuWindow) sweep() {
	oldest := w.cur - int64(len(w.buckets))
	for id := range w.stks {
		st := &w.stks[id]
		if st.used && st.lastSec < oldest {
			delete(w.idx[typeIndex(st.external)], st.key)
			*st = cpuStack{}
			w.free = append(w.free, int32(id))
		}
	}
}

// window sums the counts of the last secs seconds up to now (ns).
func (w *cpuWindow) window(now int64) (map[int32]int64, int64) {
	sec := now / 1e9
	out := make(map[int32]int64)
	var n int64
	for i := range w.buckets {
		b := &w.buckets[i]
		if b.sec < 0 || b.sec <= sec-w.secs || b.sec > sec {
			continue
		}
		for id, c := range b.counts {
			out[id] += int64(c)
			n += int64(c)
		}
	}
	return out, n
}

// frameTable interns resolved frames.
type frameTable struct {
	idx    map[stacks.Frame]int32
	frames []stacks.Frame
}

func (t *frameTable) id(f stacks.Frame) int32 {
	f.Address, f.Tier = 0, 0 // one node per method, whatever its version
	if i, ok := t.idx[f]; ok {
		return i
	}
	i := int32(len(t.frames))
	t.frames = append(t.frames, f)
	t.idx[f] = i
	return i
}

// symVersion changes whenever a frame unknown so far may now resolve: the
// symbol table grew or the mappings were read again.
func (w *cpuWindow) symVersion() int { return w.sym.Len() + w.mapGen }

// resolve names stack id's frames (leaf first), once, again while some
// frame is unknown and symVersion has changed.
func (w *cpuWindow) resolve(id int32) []int32 {
	st := &w.stks[id]
	if st.resolved != nil && !(st.unknown && w.symVersion() != st.symVer) {
		return st.resolved
	}
	frames, _ := w.sym.Stack(st.ips, st.first)
	out := make([]int32, 0, len(frames)+1)
	if st.external && (len(frames) == 0 || frames[0].Kind != stacks.KindNative) {
		out = append(out, w.frames.id(stacks.Frame{Name: stacks.NativeFrame, Kind: stacks.KindNative}))
	}
	st.unknown = false
	for _, f := range frames {
		if f.Kind == stacks.KindUnknown {
			st.unknown = true
		}
		out = append(out, w.frames.id(f))
	}
	st.resolved, st.symVer = out, w.symVersion()
	return out
}

// CPUProfile is what the sample profiler saw in the last Window seconds.
type CPUProfile struct {
	WindowSec float64 `json:"window_s"`
	Samples   int64   `json:"samples"`       // in the window
	Total     int64   `json:"total_samples"` // since the session began
	// TopMethods by samples with the method as the leaf (self), then by
	// samples with it anywhere on the stack (total).
	TopMethods []MethodRow `json:"top_methods"`
	// Flame is the call tree of the window's samples (root: "all").
	Flame *FlameNode `json:"flame"`
	// Profile is the same window as package stacks' profile (one sample per
	// stack the tree kept, Total the samples kept, a note for those cut):
	// what a page renders with report.NewFlame, as it renders a file's.
	Profile *stacks.Profile `json:"-"`
}

// MethodRow is one method's share of the window.
type MethodRow struct {
	Name         string  `json:"name"`
	Module       string  `json:"module,omitempty"`
	Self         int64   `json:"self"`
	Total        int64   `json:"total"`
	SelfPercent  float64 `json:"self_percent"`
	TotalPercent float64 `json:"total_percent"`
}

// FlameNode is one frame of the call tree: Total samples passed through
// it, Self of them stopped in it. Children are heaviest first.
type FlameNode struct {
	Name     string       `json:"name"`
	Module   string       `json:"module,omitempty"`
	Kind     string       `json:"kind"` // managed, native, unknown, truncated, root
	Total    int64        `json:"total"`
	Self     int64        `json:"self"`
	Children []*FlameNode `json:"children,omitempty"`
}

var frameKinds = map[stacks.FrameKind]string{stacks.KindManaged: "managed", stacks.KindNative: "native",
	stacks.KindUnknown: "unknown", stacks.KindTruncated: "truncated"}

func (w *cpuWindow) profile(now int64, top, maxNodes int) *CPUProfile {
	counts, n := w.window(now)
	if w.mappings != nil && n > 0 {
		if ms := w.mappings(); len(ms) > 0 {
			w.sym.SetMappings(ms)
			w.mapGen++
		}
	}
	p := &CPUProfile{WindowSec: float64(w.secs), Samples: n, Total: w.total, TopMethods: []MethodRow{}}
	p.Flame = &FlameNode{Name: "all", Kind: "root", Total: n}
	p.Profile = &stacks.Profile{Frames: []stacks.Frame{}}
	if n == 0 {
		return p
	}
	self := map[int32]int64{}
	total := map[int32]int64{}
	ids := make([]int32, 0, len(counts))
	for id := range counts {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	seen := map[int32]bool{}
	w.tree = append(w.tree[:0], treeNode{frame: -1, parent: -1, total: n})
	clear(w.edges)
	for _, id := range ids {
		c := counts[id]
		fr := w.resolve(id)
		if len(fr) > 0 {
			self[fr[0]] += c
		}
		clear(seen)
		for _, f := range fr {
			if !seen[f] {
				seen[f] = true
				total[f] += c
			}
		}
		cur := int32(0)
		for i := len(fr) - 1; i >= 0; i-- {
			k := uint64(cur)<<32 | uint64(uint32(fr[i]))
			next, ok := w.edges[k]
			if !ok {
				next = int32(len(w.tree))
				w.tree = append(w.tree, treeNode{frame: fr[i], parent: cur})
				w.edges[k] = next
			}
			w.tree[next].total += c
			cur = next
		}
		w.tree[cur].self += c
	}
	for f, t := range total {
		fr := w.frames.frames[f]
		p.TopMethods = append(p.TopMethods, MethodRow{Name: fr.Name, Module: fr.Module, Self: self[f], Total: t,
			SelfPercent: float64(self[f]) * 100 / float64(n), TotalPercent: float64(t) * 100 / float64(n)})
	}
	sort.Slice(p.TopMethods, func(i, j int) bool {
		a, b := &p.TopMethods[i], &p.TopMethods[j]
		if a.Self != b.Self {
			return a.Self > b.Self
		}
		if a.Total != b.Total {
			return a.Total > b.Total
		}
		return a.Name < b.Name
	})
	p.TopMethods = p.TopMethods[:min(top, len(p.TopMethods))]
	cut := w.cutoff(maxNodes)
	w.materialise(p.Flame, cut)
	p.Profile = w.keptProfile(cut)
	return p
}

// keptProfile is the arena's kept part (nodes of at least min samples
// whose parents are kept) as a stacks.Profile: a sample per node with
// samples of its own, its stack leaf first.
func (w *cpuWindow) keptProfile(min int64) *stacks.Profile {
	p := &stacks.Profile{Frames: slices.Clone(w.frames.frames)}
	kept := make([]bool, len(w.tree))
	kept[0] = true
	for i := range w.tree {
		t := &w.tree[i]
		if i > 0 {
			kept[i] = t.total >= min && kept[t.parent]
		}
		if !kept[i] || t.self == 0 {
			continue
		}
		var st []int32
		for j := int32(i); j > 0; j = w.tree[j].parent {
			st = append(st, w.tree[j].frame)
		}
		p.Samples = append(p.Samples, stacks.Sample{Stack: st, Count: t.self})
		p.Total += t.self
	}
	if n := w.tree[0].total; p.Total < n {
		p.Notes = []string{fmt.Sprintf("%d of the window's %d samples are in subtrees too small to keep", n-p.Total, n)}
	}
	return p
}

// cutoff is the smallest Total a node keeps so that at most maxNodes are
// kept (0: all fit). A node weighs at least as much as each child, so
// cutting by weight keeps every kept node's parent.
func (w *cpuWindow) cutoff(maxNodes int) int64 {
	if len(w.tree) <= maxNodes {
		return 0
	}
	w.totals = w.totals[:0]
	for i := range w.tree {
		w.totals = append(w.totals, w.tree[i].total)
	}
	slices.Sort(w.totals)
	// Keep strictly heavier than the first node past the limit, so ties
	// never push the count over it.
	return w.totals[len(w.totals)-1-maxNodes] + 1
}

// materialise turns the kept part of the arena into FlameNodes under root
// (parents precede their children in the arena), heaviest children first.
func (w *cpuWindow) materialise(root *FlameNode, min int64) {
	w.tree[0].out = root
	for i := 1; i < len(w.tree); i++ {
		t := &w.tree[i]
		t.out = nil
		if t.total < min {
			continue
		}
		par := w.tree[t.parent].out
		if par == nil {
			continue
		}
		fr := w.frames.frames[t.frame]
		t.out = &FlameNode{Name: fr.Name, Module: fr.Module, Kind: frameKinds[fr.Kind], Total: t.total, Self: t.self}
		par.Children = append(par.Children, t.out)
	}
	root.Self = w.tree[0].self
	for i := range w.tree {
		w.tree[i].out = nil
	}
	root.sortChildren()
}

func (n *FlameNode) sortChildren() {
	sort.Slice(n.Children, func(i, j int) bool {
		if n.Children[i].Total != n.Children[j].Total {
			return n.Children[i].Total > n.Children[j].Total
		}
		return n.Children[i].Name < n.Children[j].Name
	})
	for _, c := range n.Children {
		c.sortChildren()
	}
}
