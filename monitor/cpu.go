package monitor

import (
	"encoding/binary"
	"sort"

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
	hdr  *nettrace.Header
	sym  *stacks.Symbols
	secs int64

	idx    map[string]int32 // raw stack (ips + type byte) → id
	stks   []cpuStack
	free   []int32
	key    []byte
	frames frameTable

	buckets []cpuBucket // ring, one per second
	cur     int64       // current second (event clock)
	started bool
	total   int64 // samples ever
	st      analysis.Stats
	lastGC  int64 // second of the last sweep
}

type cpuStack struct {
	key      string // the idx key (owns the bytes)
	used     bool
	ips      []uint64
	external bool
	first    int64 // ns: symbols are resolved as of this time
	lastSec  int64
	resolved []int32 // frame ids, root last (nil: not yet)
	methods  int     // symbol table size when resolved
	unknown  bool    // some frame did not resolve
}

type cpuBucket struct {
	sec    int64
	counts map[int32]int32
}

func newCPUWindow(hdr *nettrace.Header, secs int) *cpuWindow {
	w := &cpuWindow{
		hdr: hdr, sym: stacks.NewSymbols(hdr), secs: int64(secs),
		idx: make(map[string]int32), buckets: make([]cpuBucket, secs+1),
		frames: frameTable{idx: make(map[stacks.Frame]int32)},
	}
	for i := range w.buckets {
		w.buckets[i] = cpuBucket{sec: -1, counts: make(map[int32]int32)}
	}
	return w
}

func (w *cpuWindow) stats() analysis.Stats {
	st := w.st
	st.Add(w.sym.Stats())
	return st
}

func (w *cpuWindow) event(ev *nettrace.Event, ts int64) {
	switch ev.Meta.Runtime {
	case nettrace.Runtime, nettrace.Rundown:
		w.sym.Event(ev)
	case nettrace.SampleProfiler:
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
		w.sample(ev.Stack, s.Type == clrevents.SampleExternal, ts)
	}
}

func (w *cpuWindow) sample(ips []uint64, external bool, ts int64) {
	sec := max(ts, 0) / 1e9
	w.advance(sec)
	w.key = w.key[:0]
	for _, ip := range ips {
		w.key = binary.LittleEndian.AppendUint64(w.key, ip)
	}
	if external {
		w.key = append(w.key, 1)
	} else {
		w.key = append(w.key, 0)
	}
	id, ok := w.idx[string(w.key)]
	if !ok {
		id = w.intern(ips, external, ts)
	}
	w.stks[id].lastSec = max(w.stks[id].lastSec, sec)
	b := &w.buckets[sec%int64(len(w.buckets))]
	b.counts[id]++
	w.total++
}

func (w *cpuWindow) intern(ips []uint64, external bool, ts int64) int32 {
	st := cpuStack{used: true, key: string(w.key), ips: append([]uint64(nil), ips...), external: external, first: ts}
	var id int32
	if n := len(w.free); n > 0 {
		id = w.free[n-1]
		w.free = w.free[:n-1]
		w.stks[id] = st
	} else {
		id = int32(len(w.stks))
		w.stks = append(w.stks, st)
	}
	w.idx[st.key] = id
	return id
}

// advance moves the clock to second sec, emptying the buckets of the
// seconds that fall out of the window, and now and then drops stacks no
// bucket holds.
func (w *cpuWindow) advance(sec int64) {
	if !w.started {
		w.cur, w.started = sec, true
	}
	if sec <= w.cur {
		return
	}
	for s := max(w.cur+1, sec-int64(len(w.buckets))+1); s <= sec; s++ {
		b := &w.buckets[s%int64(len(w.buckets))]
		clear(b.counts)
		b.sec = s
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
			delete(w.idx, st.key)
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

// resolve names stack id's frames (leaf first), once, again while some
// frame is unknown and the symbol table has grown.
func (w *cpuWindow) resolve(id int32) []int32 {
	st := &w.stks[id]
	if st.resolved != nil && !(st.unknown && w.sym.Len() != st.methods) {
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
	st.resolved, st.methods = out, w.sym.Len()
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
	frame    int32
}

var frameKinds = map[stacks.FrameKind]string{stacks.KindManaged: "managed", stacks.KindNative: "native",
	stacks.KindUnknown: "unknown", stacks.KindTruncated: "truncated"}

func (w *cpuWindow) profile(now int64, top, maxNodes int) *CPUProfile {
	counts, n := w.window(now)
	p := &CPUProfile{WindowSec: float64(w.secs), Samples: n, Total: w.total, TopMethods: []MethodRow{}}
	root := &FlameNode{Name: "all", Kind: "root", frame: -1}
	p.Flame = root
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
	nodes := 1
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
		node := root
		node.Total += c
		for i := len(fr) - 1; i >= 0; i-- {
			node, nodes = node.child(fr[i], &w.frames, nodes)
			node.Total += c
		}
		node.Self += c
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
	root.sortAndPrune(cutoff(root, nodes, maxNodes))
	return p
}

func (n *FlameNode) child(f int32, t *frameTable, nodes int) (*FlameNode, int) {
	for _, c := range n.Children {
		if c.frame == f {
			return c, nodes
		}
	}
	fr := t.frames[f]
	c := &FlameNode{Name: fr.Name, Module: fr.Module, Kind: frameKinds[fr.Kind], frame: f}
	n.Children = append(n.Children, c)
	return c, nodes + 1
}

// cutoff is the smallest Total a node keeps when the tree has more than
// maxNodes nodes (0: keep all).
func cutoff(root *FlameNode, nodes, maxNodes int) int64 {
	if nodes <= maxNodes {
		return 0
	}
	totals := make([]int64, 0, nodes)
	var walk func(*FlameNode)
	walk = func(n *FlameNode) {
		totals = append(totals, n.Total)
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(root)
	sort.Slice(totals, func(i, j int) bool { return totals[i] > totals[j] })
	// Keep strictly heavier than the first node past the limit, so ties
	// never push the count over it.
	return totals[maxNodes] + 1
}

func (n *FlameNode) sortAndPrune(min int64) {
	kept := n.Children[:0]
	for _, c := range n.Children {
		if c.Total >= min {
			kept = append(kept, c)
		}
	}
	clear(n.Children[len(kept):])
	n.Children = kept
	sort.Slice(n.Children, func(i, j int) bool {
		if n.Children[i].Total != n.Children[j].Total {
			return n.Children[i].Total > n.Children[j].Total
		}
		return n.Children[i].Name < n.Children[j].Name
	})
	for _, c := range n.Children {
		c.sortAndPrune(min)
	}
}
