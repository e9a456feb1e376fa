package report

// The report page's CPU data: every distinct stack of a profile as one
// call tree, and for each stack when its samples happened (counts per time
// bin), so the page can draw the flame graph of any time range.

import (
	"cmp"
	"fmt"
	"slices"
	"unsafe"

	"github.com/clrspy/clrspy/stacks"
)

// Flame is a profile's stacks for the page.
//
// The call tree's nodes are in depth-first order, children heaviest first:
// NodeDepth[i] is node i's depth (0 for the root frames) and its parent is
// the closest node before it one level up. Each stack is the path from a
// root to node StackNode[i]; it has StackRuns[i] runs of samples, read in
// order from RunBin (bin index minus the previous run's, so the first is
// the bin itself) and RunCount. Bin b covers [b*BinMS, (b+1)*BinMS) ms
// since the session start.
type Flame struct {
	// Label says what the samples measure (LabelCPU, LabelWall, ...):
	// the panel's title.
	Label string `json:"label,omitempty"`
	// Unit is what a stack's count is ("" : samples; "KiB" for memory
	// --native's bytes).
	Unit      string   `json:"unit,omitempty"`
	Frames    []string `json:"frames"`
	Modules   []string `json:"modules"`
	FrameMod  []int32  `json:"frame_mod"`  // index into Modules, -1 none
	FrameKind []int    `json:"frame_kind"` // stacks.FrameKind
	NodeDepth []int32  `json:"node_depth"`
	NodeFrame []int32  `json:"node_frame"`

	StackNode  []int32 `json:"stack_node"`
	StackCount []int64 `json:"stack_count"`
	StackRuns  []int32 `json:"stack_runs"`
	RunBin     []int32 `json:"run_bin"`
	RunCount   []int32 `json:"run_count"`
	BinMS      float64 `json:"bin_ms"` // 0: no time data (one bin)

	Total    int64   `json:"total"` // samples
	Threads  int     `json:"threads"`
	PeriodMS float64 `json:"period_ms"`
	// FromMS and ToMS are set when the data covers a window only (the
	// live view's last seconds).
	FromMS float64  `json:"from_ms,omitempty"`
	ToMS   float64  `json:"to_ms,omitempty"`
	Notes  []string `json:"notes,omitempty"`
}

// flameStack is one resolved stack and its bins while the tree is built:
// the timeline series it reads them from, or (without a timeline) bins.
type flameStack struct {
	frames []int32 // leaf first, in the profile's numbering
	series []int32 // timeline series: 2*raw stack + external
	bins   []stacks.Bin
	count  int64
}

// flameBins reads a stack's runs from the timeline when the page's data is
// written, widened by factor, instead of copying every run (a million on a
// 1 GiB trace) into the stacks first: the copy and the growing run columns
// were the report's peak.
type flameBins struct {
	tl     *stacks.Timeline
	factor int32
	buf    []stacks.Bin
}

// of returns fs's bins in time order, one per widened bin; the slice is
// reused by the next call.
func (fb *flameBins) of(fs *flameStack) []stacks.Bin {
	if fs.series == nil {
		return fs.bins
	}
	b := fb.buf[:0]
	for _, k := range fs.series {
		b = fb.tl.AppendBins(b, k/2, k%2 == 1)
	}
	for i := range b {
		b[i].Index /= fb.factor
	}
	if len(fs.series) > 1 {
		slices.SortFunc(b, func(x, y stacks.Bin) int { return cmp.Compare(x.Index, y.Index) })
	}
	out := 0
	for _, x := range b {
		if out > 0 && b[out-1].Index == x.Index {
			b[out-1].Count += x.Count
			continue
		}
		b[out] = x
		out++
	}
	fb.buf = b
	return b[:out]
}

// NewFlame builds the page's CPU data from a profile, the builder that
// made it (its last Result) and the timeline fed from the same builder's
// OnSample. With tl nil, the flame graph has no time data and b is not
// used (a profile made by another sampler). maxBins bounds the time bins
// (they widen by powers of two to fit).
func NewFlame(b *stacks.Builder, p *stacks.Profile, tl *stacks.Timeline, maxBins int) *Flame {
	var set stackSet
	binNanos := int64(0)
	fb := &flameBins{tl: tl, factor: 1}
	if tl != nil {
		binNanos = tl.BinNanos()
		var last int32
		tl.Each(func(raw int32, external bool, bins []stacks.Bin) {
			fr := b.StackOf(raw, external)
			if fr == nil {
				return // first seen after the profile was taken
			}
			var n int64
			for _, x := range bins {
				n += int64(x.Count)
			}
			last = max(last, bins[len(bins)-1].Index) // bins are in time order
			fs := set.of(fr)
			k := 2 * raw
			if external {
				k++
			}
			fs.series = append(fs.series, k)
			fs.count += n
		})
		// Widen the bins to at most maxBins over the session.
		for int64(last/fb.factor) >= int64(maxBins) {
			fb.factor *= 2
		}
	} else {
		for i := range p.Samples {
			s := &p.Samples[i]
			fs := set.of(s.Stack)
			fs.bins = append(fs.bins, stacks.Bin{Index: 0, Count: int32(min(s.Count, 1<<31-1))})
			fs.count += s.Count
		}
		for _, fs := range set.list {
			slices.SortFunc(fs.bins, func(a, b stacks.Bin) int { return cmp.Compare(a.Index, b.Index) })
			out := 0
			for _, x := range fs.bins {
				if out > 0 && fs.bins[out-1].Index == x.Index {
					fs.bins[out-1].Count += x.Count
					continue
				}
				fs.bins[out] = x
				out++
			}
			fs.bins = fs.bins[:out]
		}
	}
	f := buildFlame(p, set.list, fb)
	f.BinMS = float64(binNanos) * float64(fb.factor) / 1e6
	return f
}

// NewFlameWindow builds CPU data from sample counts per raw stack (a
// window of a timeline), without time bins.
func NewFlameWindow(b *stacks.Builder, p *stacks.Profile, counts func(yield func(raw int32, external bool, n int64))) *Flame {
	var set stackSet
	counts(func(raw int32, external bool, n int64) {
		fr := b.StackOf(raw, external)
		if fr == nil || n <= 0 {
			return
		}
		set.of(fr).count += n
	})
	list := set.list
	for _, fs := range list {
		fs.bins = []stacks.Bin{{Index: 0, Count: int32(min(fs.count, 1<<31-1))}}
	}
	return buildFlame(p, list, &flameBins{})
}

// stackSet is the distinct stacks of a flame, in the order first seen.
type stackSet struct {
	byKey map[string]*flameStack
	list  []*flameStack
}

// of is the entry of the stack frames, made if missing.
func (s *stackSet) of(frames []int32) *flameStack {
	k := int32Key(frames)
	fs := s.byKey[k]
	if fs == nil {
		if s.byKey == nil {
			s.byKey = map[string]*flameStack{}
		}
		fs = &flameStack{frames: frames}
		s.byKey[k] = fs
		s.list = append(s.list, fs)
	}
	return fs
}

func int32Key(s []int32) string {
	if len(s) == 0 {
		return ""
	}
	return string(unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*4))
}

// treeNode is a node of the flame tree. Its children are a slice searched
// in order: nearly every node has one or two (a map per node made the tree
// the report's largest allocation, 40 MB for 100,000 nodes).
type treeNode struct {
	frame    int32 // profile numbering
	total    int64
	children []*treeNode
	stack    *flameStack // the stack ending here, if any
}

// child is n's child for frame fr, made if missing.
func (n *treeNode) child(fr int32) *treeNode {
	for _, c := range n.children {
		if c.frame == fr {
			return c
		}
	}
	c := &treeNode{frame: fr}
	n.children = append(n.children, c)
	return c
}

func buildFlame(p *stacks.Profile, list []*flameStack, fb *flameBins) *Flame {
	f := &Flame{Threads: len(p.Threads), PeriodMS: float64(p.PeriodNanos) / 1e6, Notes: p.Notes,
		Frames: []string{}, Modules: []string{}, FrameMod: []int32{}, FrameKind: []int{},
		NodeDepth: []int32{}, NodeFrame: []int32{}, StackNode: []int32{}, StackCount: []int64{},
		StackRuns: []int32{}, RunBin: []int32{}, RunCount: []int32{}}
	root := &treeNode{frame: -1}
	cut := 0 // stacks deeper than MaxFlameDepth
	// One node per method, whatever its code version: the profile keeps a
	// frame per code body (a tier-0 and a tier-1 body, a rejit), which the
	// page cannot tell apart (it shows names), so two siblings of one name
	// would split the method's width (methodFrames). Folded and speedscope
	// output merge them too, and so does the live window (one model for
	// both pages).
	dense, first := methodFrames(p)
	canon := make([]int32, len(p.Frames))
	for i, m := range dense {
		canon[i] = first[m]
	}
	for _, fs := range list {
		if fs.count == 0 {
			continue
		}
		n := root
		n.total += fs.count
		// A stack deeper than the page draws keeps its root-side frames,
		// a cut frame and its leaf (as WriteFlameGraph does); stacks that
		// differ only in the frames cut out end in the same node.
		stop := 0
		if len(fs.frames) > MaxFlameDepth {
			stop = len(fs.frames) - (MaxFlameDepth - 2)
			cut++
		}
		for i := len(fs.frames) - 1; i >= stop; i-- {
			c := n.child(canon[fs.frames[i]])
			c.total += fs.count
			n = c
		}
		if stop > 0 {
			for _, fr := range [2]int32{cutFrame, canon[fs.frames[0]]} {
				c := n.child(fr)
				c.total += fs.count
				n = c
			}
		}
		if n.stack != nil { // an empty stack merges into the root's
			n.stack.count += fs.count
			n.stack.series = append(n.stack.series, fs.series...)
			n.stack.bins = append(n.stack.bins, fs.bins...)
			continue
		}
		n.stack = fs
	}
	f.Total = root.total
	// The run columns are the flame's bulk: sized once, not grown.
	runs := 0
	for _, fs := range list {
		if fs.count != 0 {
			runs += len(fb.of(fs))
		}
	}
	f.RunBin, f.RunCount = make([]int32, 0, runs), make([]int32, 0, runs)
	frameIdx := map[int32]int32{}
	modIdx := map[string]int32{}
	frame := func(fr int32) int32 {
		if i, ok := frameIdx[fr]; ok {
			return i
		}
		i := int32(len(f.Frames))
		frameIdx[fr] = i
		if fr == cutFrame {
			f.Frames = append(f.Frames, FlameCutName)
			f.FrameKind = append(f.FrameKind, int(stacks.KindTruncated))
			f.FrameMod = append(f.FrameMod, -1)
			return i
		}
		pf := &p.Frames[fr]
		f.Frames = append(f.Frames, pf.Name)
		f.FrameKind = append(f.FrameKind, int(pf.Kind))
		m := int32(-1)
		if pf.Module != "" {
			var ok bool
			if m, ok = modIdx[pf.Module]; !ok {
				m = int32(len(f.Modules))
				modIdx[pf.Module] = m
				f.Modules = append(f.Modules, pf.Module)
			}
		}
		f.FrameMod = append(f.FrameMod, m)
		return i
	}
	emitStack := func(node int32, fs *flameStack) {
		f.StackNode = append(f.StackNode, node)
		f.StackCount = append(f.StackCount, fs.count)
		bins := fb.of(fs)
		f.StackRuns = append(f.StackRuns, int32(len(bins)))
		prev := int32(0)
		for _, x := range bins {
			f.RunBin = append(f.RunBin, x.Index-prev)
			f.RunCount = append(f.RunCount, x.Count)
			prev = x.Index
		}
	}
	if root.stack != nil {
		// Samples with no frame at all: the page shows them under the root.
		emitStack(-1, root.stack)
	}
	var walk func(n *treeNode, depth int32)
	walk = func(n *treeNode, depth int32) {
		kids := n.children // the tree is this function's: sorted in place
		slices.SortFunc(kids, func(a, b *treeNode) int {
			if a.total != b.total {
				return cmp.Compare(b.total, a.total)
			}
			return cmp.Compare(a.frame, b.frame)
		})
		for _, c := range kids {
			idx := int32(len(f.NodeDepth))
			f.NodeDepth = append(f.NodeDepth, depth)
			f.NodeFrame = append(f.NodeFrame, frame(c.frame))
			if c.stack != nil {
				emitStack(idx, c.stack)
			}
			walk(c, depth+1)
		}
	}
	walk(root, 0)
	if cut > 0 {
		f.Notes = append(slices.Clip(f.Notes), fmt.Sprintf("%d %s deeper than %d frames: drawn to that depth, the frames between marked %s", cut, cutNoun(int64(cut), "stack"), MaxFlameDepth, FlameCutName))
	}
	return f
}

// cutNoun is noun, plural unless n is 1.
func cutNoun(n int64, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}

// cutFrame is the frame, outside the profile's numbering, that stands for
// the frames of a deep stack the page does not draw.
const cutFrame = -2
